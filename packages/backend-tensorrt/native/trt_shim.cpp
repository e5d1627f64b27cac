// trt_shim.cpp: the C ABI of trt_shim.h over TensorRT 10's runtime and the CUDA runtime.
// Built into libtritium_trt.so by native/build.sh where TensorRT and CUDA are installed.
//
// Per context: one execution context on one optimization profile, one non-blocking CUDA stream,
// grow-only device buffers and grow-only pinned (page-locked) host staging buffers per tensor, so
// host<->device copies are real async DMA on the context's stream. Every entry point catches C++
// exceptions and reports failures through trt_last_error() (thread-local), including the last
// error TensorRT logged on this thread.
//
// Not supported (reported as TRT_ERR_UNSUPPORTED or refused by the backend): shape tensors,
// data-dependent output shapes (an output whose shape still has -1 after all input shapes are set),
// INT4/FP4 tensors.
#include "trt_shim.h"

#include <NvInfer.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

thread_local std::string g_last_error;
thread_local std::string g_last_logged;

int32_t fail(int32_t status, const std::string& message) {
  g_last_error = message;
  if (!g_last_logged.empty()) {
    g_last_error += " (TensorRT: " + g_last_logged + ")";
    g_last_logged.clear();
  }
  return status;
}

class Logger : public nvinfer1::ILogger {
 public:
  void log(Severity severity, const char* msg) noexcept override {
    // Errors are kept for the next failure message on this thread; the rest is dropped (the
    // backend logs through Tritium, not stderr).
    if (severity <= Severity::kERROR && msg != nullptr) g_last_logged = msg;
  }
};

Logger g_logger;

bool cuda_ok(cudaError_t err, const char* what, int32_t* status) {
  if (err == cudaSuccess) return true;
  *status = fail(TRT_ERR_CUDA, std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
  return false;
}

int64_t element_size(nvinfer1::DataType type) {
  switch (type) {
    case nvinfer1::DataType::kFLOAT:
    case nvinfer1::DataType::kINT32:
      return 4;
    case nvinfer1::DataType::kHALF:
    case nvinfer1::DataType::kBF16:
      return 2;
    case nvinfer1::DataType::kINT8:
    case nvinfer1::DataType::kBOOL:
    case nvinfer1::DataType::kUINT8:
    case nvinfer1::DataType::kFP8:
      return 1;
    case nvinfer1::DataType::kINT64:
      return 8;
    default:
      return -1;  // INT4 and other packed types
  }
}

int32_t copy_dims(const nvinfer1::Dims& dims, int64_t* out) {
  if (dims.nbDims < 0 || dims.nbDims > TRT_MAX_DIMS) return -1;
  for (int32_t i = 0; i < dims.nbDims; i++) out[i] = dims.d[i];
  return dims.nbDims;
}

// A grow-only buffer in device memory or pinned host memory.
struct Buffer {
  void* ptr = nullptr;
  uint64_t capacity = 0;
  bool pinned = false;

  bool ensure(uint64_t bytes, int32_t* status) {
    if (bytes <= capacity && ptr != nullptr) return true;
    release();
    const uint64_t size = bytes == 0 ? 1 : bytes;  // TensorRT wants a non-null address even for empty tensors
    cudaError_t err = pinned ? cudaMallocHost(&ptr, size) : cudaMalloc(&ptr, size);
    if (!cuda_ok(err, pinned ? "cudaMallocHost" : "cudaMalloc", status)) {
      ptr = nullptr;
      return false;
    }
    capacity = size;
    return true;
  }

  void release() {
    if (ptr != nullptr) {
      if (pinned) cudaFreeHost(ptr);
      else cudaFree(ptr);
    }
    ptr = nullptr;
    capacity = 0;
  }
};

struct TensorBuffers {
  Buffer device;
  Buffer staging{nullptr, 0, true};
  uint64_t bytes = 0;  // size of the current contents
};

}  // namespace

struct trt_engine {
  int32_t device = 0;
  std::unique_ptr<nvinfer1::IRuntime> runtime;
  std::unique_ptr<nvinfer1::ICudaEngine> engine;
  std::vector<std::string> names;
};

struct trt_context {
  trt_engine* engine = nullptr;
  std::unique_ptr<nvinfer1::IExecutionContext> context;
  cudaStream_t stream = nullptr;
  std::unordered_map<std::string, TensorBuffers> buffers;
  std::vector<std::string> outputs;
};

extern "C" {

int32_t trt_shim_abi_version(void) { return TRT_SHIM_ABI_VERSION; }

const char* trt_shim_implementation(void) {
  static const std::string text = [] {
    const int32_t v = getInferLibVersion();
    // TensorRT 10 encodes major * 10000 + minor * 100 + patch.
    return "tensorrt " + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100) +
           " (built against " + std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + ")";
  }();
  return text.c_str();
}

const char* trt_last_error(void) { return g_last_error.c_str(); }

trt_engine* trt_engine_deserialize(const void* data, uint64_t size, int32_t device) {
  try {
    int32_t status = TRT_OK;
    if (!cuda_ok(cudaSetDevice(device), "cudaSetDevice", &status)) return nullptr;
    auto e = std::make_unique<trt_engine>();
    e->device = device;
    e->runtime.reset(nvinfer1::createInferRuntime(g_logger));
    if (!e->runtime) {
      fail(TRT_ERR_RUNTIME, "createInferRuntime failed");
      return nullptr;
    }
    e->engine.reset(e->runtime->deserializeCudaEngine(data, static_cast<size_t>(size)));
    if (!e->engine) {
      fail(TRT_ERR_RUNTIME, "deserializeCudaEngine failed (not a TensorRT engine, or built with another TensorRT version / for another GPU)");
      return nullptr;
    }
    const int32_t n = e->engine->getNbIOTensors();
    for (int32_t i = 0; i < n; i++) e->names.emplace_back(e->engine->getIOTensorName(i));
    return e.release();
  } catch (const std::exception& ex) {
    fail(TRT_ERR_RUNTIME, std::string("trt_engine_deserialize: ") + ex.what());
    return nullptr;
  }
}

void trt_engine_destroy(trt_engine* engine) {
  if (engine == nullptr) return;
  cudaSetDevice(engine->device);
  engine->engine.reset();
  engine->runtime.reset();
  delete engine;
}

int32_t trt_engine_num_io(const trt_engine* e) {
  if (e == nullptr) return fail(-1, "null engine");
  return static_cast<int32_t>(e->names.size());
}

int32_t trt_engine_num_profiles(const trt_engine* e) {
  if (e == nullptr) return fail(-1, "null engine");
  return e->engine->getNbOptimizationProfiles();
}

static const char* name_at(const trt_engine* e, int32_t index) {
  if (e == nullptr || index < 0 || index >= static_cast<int32_t>(e->names.size())) {
    fail(TRT_ERR_INVALID, "no I/O tensor at index " + std::to_string(index));
    return nullptr;
  }
  return e->names[static_cast<size_t>(index)].c_str();
}

const char* trt_engine_io_name(const trt_engine* e, int32_t index) { return name_at(e, index); }

int32_t trt_engine_io_mode(const trt_engine* e, int32_t index) {
  const char* name = name_at(e, index);
  if (name == nullptr) return -1;
  switch (e->engine->getTensorIOMode(name)) {
    case nvinfer1::TensorIOMode::kINPUT:
      return TRT_IO_INPUT;
    case nvinfer1::TensorIOMode::kOUTPUT:
      return TRT_IO_OUTPUT;
    default:
      return fail(-1, std::string("tensor '") + name + "' is neither input nor output");
  }
}

int32_t trt_engine_io_dtype(const trt_engine* e, int32_t index) {
  const char* name = name_at(e, index);
  return name == nullptr ? -1 : static_cast<int32_t>(e->engine->getTensorDataType(name));
}

int32_t trt_engine_io_is_shape_tensor(const trt_engine* e, int32_t index) {
  const char* name = name_at(e, index);
  return name == nullptr ? -1 : (e->engine->isShapeInferenceIO(name) ? 1 : 0);
}

int32_t trt_engine_io_shape(const trt_engine* e, int32_t index, int64_t* dims) {
  const char* name = name_at(e, index);
  if (name == nullptr) return -1;
  const int32_t rank = copy_dims(e->engine->getTensorShape(name), dims);
  return rank < 0 ? fail(-1, std::string("tensor '") + name + "' has an unsupported rank") : rank;
}

int32_t trt_engine_io_profile_shape(const trt_engine* e, int32_t index, int32_t profile, int32_t selector, int64_t* dims) {
  const char* name = name_at(e, index);
  if (name == nullptr) return -1;
  if (profile < 0 || profile >= e->engine->getNbOptimizationProfiles() || selector < TRT_PROFILE_MIN || selector > TRT_PROFILE_MAX) {
    return fail(-1, "no profile " + std::to_string(profile) + " shape for tensor '" + name + "'");
  }
  const auto which = static_cast<nvinfer1::OptProfileSelector>(selector);
  const int32_t rank = copy_dims(e->engine->getProfileShape(name, profile, which), dims);
  return rank < 0 ? fail(-1, std::string("no profile shape for tensor '") + name + "'") : rank;
}

trt_context* trt_context_create(trt_engine* e, int32_t profile) {
  try {
    int32_t status = TRT_OK;
    if (e == nullptr) {
      fail(TRT_ERR_INVALID, "null engine");
      return nullptr;
    }
    if (profile < 0 || profile >= e->engine->getNbOptimizationProfiles()) {
      fail(TRT_ERR_INVALID, "invalid optimization profile " + std::to_string(profile));
      return nullptr;
    }
    if (!cuda_ok(cudaSetDevice(e->device), "cudaSetDevice", &status)) return nullptr;
    auto c = std::make_unique<trt_context>();
    c->engine = e;
    if (!cuda_ok(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", &status)) return nullptr;
    c->context.reset(e->engine->createExecutionContext());
    if (!c->context) {
      cudaStreamDestroy(c->stream);
      fail(TRT_ERR_RUNTIME, "createExecutionContext failed");
      return nullptr;
    }
    if (!c->context->setOptimizationProfileAsync(profile, c->stream) ||
        !cuda_ok(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize", &status)) {
      c->context.reset();
      cudaStreamDestroy(c->stream);
      if (status == TRT_OK) fail(TRT_ERR_RUNTIME, "setOptimizationProfileAsync(" + std::to_string(profile) + ") failed");
      return nullptr;
    }
    for (const auto& name : e->names) {
      if (e->engine->getTensorIOMode(name.c_str()) == nvinfer1::TensorIOMode::kOUTPUT) c->outputs.push_back(name);
    }
    return c.release();
  } catch (const std::exception& ex) {
    fail(TRT_ERR_RUNTIME, std::string("trt_context_create: ") + ex.what());
    return nullptr;
  }
}

void trt_context_destroy(trt_context* c) {
  if (c == nullptr) return;
  cudaSetDevice(c->engine->device);
  if (c->stream != nullptr) cudaStreamSynchronize(c->stream);
  c->context.reset();
  for (auto& entry : c->buffers) {
    entry.second.device.release();
    entry.second.staging.release();
  }
  if (c->stream != nullptr) cudaStreamDestroy(c->stream);
  delete c;
}

static bool known(trt_context* c, const char* name, nvinfer1::TensorIOMode mode) {
  return c != nullptr && name != nullptr && c->engine->engine->getTensorIOMode(name) == mode;
}

int32_t trt_context_set_input_shape(trt_context* c, const char* name, const int64_t* dims, int32_t nb_dims) {
  if (!known(c, name, nvinfer1::TensorIOMode::kINPUT)) return fail(TRT_ERR_INVALID, std::string("no input named '") + (name ? name : "") + "'");
  if (nb_dims < 0 || nb_dims > TRT_MAX_DIMS) return fail(TRT_ERR_SHAPE, "too many dims");
  nvinfer1::Dims shape{};
  shape.nbDims = nb_dims;
  for (int32_t i = 0; i < nb_dims; i++) shape.d[i] = dims[i];
  if (!c->context->setInputShape(name, shape)) return fail(TRT_ERR_SHAPE, std::string("setInputShape('") + name + "') refused the shape");
  return TRT_OK;
}

int32_t trt_context_tensor_shape(trt_context* c, const char* name, int64_t* dims) {
  if (c == nullptr || name == nullptr) return fail(-1, "null context or name");
  const nvinfer1::Dims shape = c->context->getTensorShape(name);
  if (shape.nbDims < 0) return fail(-1, std::string("no shape for tensor '") + name + "' (unknown name, or input shapes missing)");
  for (int32_t i = 0; i < shape.nbDims; i++) {
    if (shape.d[i] < 0) return fail(-1, std::string("tensor '") + name + "' has a data-dependent shape, which this shim does not support");
  }
  return copy_dims(shape, dims);
}

static int64_t volume(const nvinfer1::Dims& dims) {
  int64_t v = 1;
  for (int32_t i = 0; i < dims.nbDims; i++) v *= dims.d[i];
  return v;
}

int32_t trt_context_write_input(trt_context* c, const char* name, const void* host, uint64_t bytes) {
  try {
    if (!known(c, name, nvinfer1::TensorIOMode::kINPUT)) return fail(TRT_ERR_INVALID, std::string("no input named '") + (name ? name : "") + "'");
    const nvinfer1::Dims shape = c->context->getTensorShape(name);
    const int64_t size = element_size(c->engine->engine->getTensorDataType(name));
    if (size < 0) return fail(TRT_ERR_UNSUPPORTED, std::string("input '") + name + "' has a packed data type");
    const uint64_t expected = static_cast<uint64_t>(volume(shape) * size);
    if (shape.nbDims < 0 || expected != bytes) {
      return fail(TRT_ERR_INVALID, std::string("input '") + name + "' needs " + std::to_string(expected) + " bytes, got " + std::to_string(bytes));
    }
    int32_t status = TRT_OK;
    TensorBuffers& b = c->buffers[name];
    if (!b.staging.ensure(bytes, &status) || !b.device.ensure(bytes, &status)) return status;
    if (bytes > 0) std::memcpy(b.staging.ptr, host, bytes);
    if (!cuda_ok(cudaMemcpyAsync(b.device.ptr, b.staging.ptr, bytes, cudaMemcpyHostToDevice, c->stream), "cudaMemcpyAsync(host to device)", &status)) return status;
    b.bytes = bytes;
    if (!c->context->setTensorAddress(name, b.device.ptr)) return fail(TRT_ERR_RUNTIME, std::string("setTensorAddress('") + name + "') failed");
    return TRT_OK;
  } catch (const std::exception& ex) {
    return fail(TRT_ERR_RUNTIME, std::string("trt_context_write_input: ") + ex.what());
  }
}

int32_t trt_context_enqueue(trt_context* c) {
  try {
    if (c == nullptr) return fail(TRT_ERR_INVALID, "null context");
    int32_t status = TRT_OK;
    if (!cuda_ok(cudaSetDevice(c->engine->device), "cudaSetDevice", &status)) return status;
    if (!c->context->allInputDimensionsSpecified()) return fail(TRT_ERR_SHAPE, "not every input shape is set");
    for (const auto& name : c->outputs) {
      const nvinfer1::Dims shape = c->context->getTensorShape(name.c_str());
      const int64_t size = element_size(c->engine->engine->getTensorDataType(name.c_str()));
      if (size < 0) return fail(TRT_ERR_UNSUPPORTED, "output '" + name + "' has a packed data type");
      for (int32_t i = 0; i < shape.nbDims; i++) {
        if (shape.d[i] < 0) return fail(TRT_ERR_UNSUPPORTED, "output '" + name + "' has a data-dependent shape, which this shim does not support");
      }
      TensorBuffers& b = c->buffers[name];
      b.bytes = static_cast<uint64_t>(volume(shape) * size);
      if (!b.device.ensure(b.bytes, &status) || !b.staging.ensure(b.bytes, &status)) return status;
      if (!c->context->setTensorAddress(name.c_str(), b.device.ptr)) return fail(TRT_ERR_RUNTIME, "setTensorAddress('" + name + "') failed");
    }
    if (!c->context->enqueueV3(c->stream)) return fail(TRT_ERR_RUNTIME, "enqueueV3 failed");
    for (const auto& name : c->outputs) {
      TensorBuffers& b = c->buffers[name];
      if (!cuda_ok(cudaMemcpyAsync(b.staging.ptr, b.device.ptr, b.bytes, cudaMemcpyDeviceToHost, c->stream), "cudaMemcpyAsync(device to host)", &status)) return status;
    }
    return TRT_OK;
  } catch (const std::exception& ex) {
    return fail(TRT_ERR_RUNTIME, std::string("trt_context_enqueue: ") + ex.what());
  }
}

int32_t trt_context_synchronize(trt_context* c) {
  if (c == nullptr) return fail(TRT_ERR_INVALID, "null context");
  int32_t status = TRT_OK;
  cuda_ok(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize", &status);
  return status;
}

int32_t trt_context_read_output(trt_context* c, const char* name, void* host, uint64_t bytes) {
  if (!known(c, name, nvinfer1::TensorIOMode::kOUTPUT)) return fail(TRT_ERR_INVALID, std::string("no output named '") + (name ? name : "") + "'");
  auto it = c->buffers.find(name);
  if (it == c->buffers.end() || it->second.bytes != bytes) {
    return fail(TRT_ERR_INVALID, std::string("output '") + name + "' has " + std::to_string(it == c->buffers.end() ? 0 : it->second.bytes) +
                                     " bytes, asked for " + std::to_string(bytes));
  }
  if (bytes > 0) std::memcpy(host, it->second.staging.ptr, bytes);
  return TRT_OK;
}

}  // extern "C"
