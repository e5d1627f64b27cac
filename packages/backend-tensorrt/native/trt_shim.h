/*
 * trt_shim.h: the C ABI between Tritium's TensorRT backend (src/binding.ts, through koffi) and
 * TensorRT 10. Two libraries implement it:
 *   - native/trt_shim.cpp  -> libtritium_trt.so, over the real TensorRT 10 runtime + CUDA runtime;
 *   - test/double/trt_double.c -> a TEST DOUBLE over host memory (no GPU), compiled by the tests.
 *
 * Conventions
 *   - Status-returning calls return TRT_OK (0) or one of the TRT_ERR_* codes; counts and dims
 *     return >= 0, or -1 on error. After any failure, trt_last_error() describes it (per thread).
 *   - Dims are int64 arrays of at most TRT_MAX_DIMS entries; -1 is a dynamic dimension.
 *   - Data types use nvinfer1::DataType's numbering (kFLOAT = 0 ... kINT64 = 8).
 *   - One trt_context = one execution context + one CUDA stream + its device buffers and pinned
 *     host staging buffers. A context is used by one thread at a time.
 *   - Execute sequence: set_input_shape (each input) -> write_input (each input) ->
 *     tensor_shape (outputs, to size the host buffers) -> enqueue -> synchronize ->
 *     read_output (each output).
 */
#ifndef TRITIUM_TRT_SHIM_H
#define TRITIUM_TRT_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRT_SHIM_ABI_VERSION 1
#define TRT_MAX_DIMS 8

/* Status codes. */
#define TRT_OK 0
#define TRT_ERR_INVALID 1     /* bad argument (null handle, unknown tensor, bad size) */
#define TRT_ERR_SHAPE 2       /* shape outside the optimization profile / wrong rank */
#define TRT_ERR_CUDA 3        /* a CUDA runtime call failed */
#define TRT_ERR_RUNTIME 4     /* TensorRT refused (deserialize, enqueue, ...) */
#define TRT_ERR_UNSUPPORTED 5 /* a feature the shim does not handle (e.g. data-dependent shapes) */

/* I/O modes. */
#define TRT_IO_INPUT 1
#define TRT_IO_OUTPUT 2

/* Profile selectors (nvinfer1::OptProfileSelector). */
#define TRT_PROFILE_MIN 0
#define TRT_PROFILE_OPT 1
#define TRT_PROFILE_MAX 2

typedef struct trt_engine trt_engine;
typedef struct trt_context trt_context;

/* TRT_SHIM_ABI_VERSION of the library (the binding refuses a mismatch). */
int32_t trt_shim_abi_version(void);
/* What this library is, e.g. "tensorrt 10.3.0" or "test-double (host memory)". */
const char *trt_shim_implementation(void);
/* Message of the last failure on this thread ("" if none). Valid until the next call. */
const char *trt_last_error(void);

/* Deserializes an engine (a .plan file's bytes) on CUDA device `device`; NULL on failure. */
trt_engine *trt_engine_deserialize(const void *data, uint64_t size, int32_t device);
void trt_engine_destroy(trt_engine *engine);
int32_t trt_engine_num_io(const trt_engine *engine);
int32_t trt_engine_num_profiles(const trt_engine *engine);
/* Name of I/O tensor `index` (owned by the engine); NULL when out of range. */
const char *trt_engine_io_name(const trt_engine *engine, int32_t index);
/* TRT_IO_INPUT / TRT_IO_OUTPUT, -1 on error. */
int32_t trt_engine_io_mode(const trt_engine *engine, int32_t index);
/* nvinfer1::DataType value, -1 on error. */
int32_t trt_engine_io_dtype(const trt_engine *engine, int32_t index);
/* 1 when the tensor is a shape tensor (values, not data, set the shapes), 0 if not, -1 on error. */
int32_t trt_engine_io_is_shape_tensor(const trt_engine *engine, int32_t index);
/* Writes the engine's dims (-1 = dynamic) into dims[TRT_MAX_DIMS]; returns the rank or -1. */
int32_t trt_engine_io_shape(const trt_engine *engine, int32_t index, int64_t *dims);
/* Inputs: writes the min/opt/max dims of `profile` into dims[TRT_MAX_DIMS]; returns the rank or -1. */
int32_t trt_engine_io_profile_shape(const trt_engine *engine, int32_t index, int32_t profile, int32_t selector, int64_t *dims);

/* Creates an execution context on optimization profile `profile`, with its own CUDA stream. */
trt_context *trt_context_create(trt_engine *engine, int32_t profile);
void trt_context_destroy(trt_context *context);
/* Sets the runtime shape of input `name` (TRT_ERR_SHAPE when outside the profile). */
int32_t trt_context_set_input_shape(trt_context *context, const char *name, const int64_t *dims, int32_t nb_dims);
/* The current shape of tensor `name` (outputs: resolved from the input shapes set); rank or -1. */
int32_t trt_context_tensor_shape(trt_context *context, const char *name, int64_t *dims);
/* Copies `bytes` of host data for input `name` to the device (through pinned staging; async on the stream). */
int32_t trt_context_write_input(trt_context *context, const char *name, const void *host, uint64_t bytes);
/* Binds every output, enqueues the engine (enqueueV3) and the device-to-pinned copies of the outputs. */
int32_t trt_context_enqueue(trt_context *context);
/* Waits for the stream. */
int32_t trt_context_synchronize(trt_context *context);
/* Copies output `name` (after synchronize) into `host`; `bytes` must equal its size. */
int32_t trt_context_read_output(trt_context *context, const char *name, void *host, uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* TRITIUM_TRT_SHIM_H */
