/*
 * TEST DOUBLE of the TensorRT shim: implements native/trt_shim.h over host memory, with no GPU,
 * CUDA or TensorRT. It exists so the backend's binding, marshalling, shape handling and error
 * paths run for real in tests. It is NOT TensorRT and is never shipped or loaded in production.
 *
 * Its "engine" is a text file:
 *
 *   TRITIUM-TRT-DOUBLE 1
 *   profiles <n>
 *   input  <name> <dtype> <dims>  <min>/<opt>/<max> ...   (one min/opt/max triple per profile)
 *   output <name> <dtype> <dims>
 *   op identity | add | addsub | scale <k> | fail | crash
 *
 * dims are comma-separated (-1 = dynamic), dtype is nvinfer1::DataType's number (0 FP32, 3 INT32,
 * 8 INT64, ...). Ops: identity (output i = input i), add (every output = input 0 + input 1, FP32/
 * INT32/INT64), addsub (Triton's `simple`: output 0 = input 0 + input 1, output 1 = input 0 - input 1,
 * FP32), scale (output 0 = input 0 * k, FP32), fail (enqueue returns an error), crash (enqueue
 * calls abort(), killing the process, as a faulting CUDA kernel or driver bug would).
 * Output shapes follow input i (identity) or input 0 (the other ops).
 */
#include "../../native/trt_shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IO 16
#define MAX_PROFILES 8
#define NAME_LEN 128

typedef struct {
  char name[NAME_LEN];
  int32_t mode;
  int32_t dtype;
  int32_t rank;
  int64_t dims[TRT_MAX_DIMS];
  int64_t profile[MAX_PROFILES][3][TRT_MAX_DIMS];
} io_desc;

struct trt_engine {
  int32_t num_io;
  int32_t num_profiles;
  io_desc io[MAX_IO];
  char op[32];
  double scale;
};

typedef struct {
  int shape_set;
  int64_t shape[TRT_MAX_DIMS];
  unsigned char *data; /* the "device" buffer */
  uint64_t bytes;
} io_state;

struct trt_context {
  trt_engine *engine;
  int32_t profile;
  io_state state[MAX_IO];
};

static __thread char last_error[512];

#define set_error(...) snprintf(last_error, sizeof last_error, __VA_ARGS__)

int32_t trt_shim_abi_version(void) { return TRT_SHIM_ABI_VERSION; }
const char *trt_shim_implementation(void) { return "test-double (host memory, no GPU)"; }
const char *trt_last_error(void) { return last_error; }

static int64_t element_size(int32_t dtype) {
  switch (dtype) {
    case 0: case 3: return 4;
    case 1: case 7: return 2;
    case 2: case 4: case 5: case 6: return 1;
    case 8: return 8;
    default: return -1;
  }
}

static int parse_dims(const char *text, int64_t *dims) {
  int rank = 0;
  const char *p = text;
  while (*p && rank < TRT_MAX_DIMS) {
    char *end;
    dims[rank++] = strtoll(p, &end, 10);
    if (end == p) return -1;
    p = end;
    if (*p == ',') p++;
    else if (*p) return -1;
  }
  return rank;
}

trt_engine *trt_engine_deserialize(const void *data, uint64_t size, int32_t device) {
  (void)device;
  char *text = malloc(size + 1);
  if (!text) { set_error("double: out of memory"); return NULL; }
  memcpy(text, data, size);
  text[size] = 0;
  if (strncmp(text, "TRITIUM-TRT-DOUBLE 1\n", 21) != 0) {
    free(text);
    set_error("double: not a test-double engine (missing 'TRITIUM-TRT-DOUBLE 1' header)");
    return NULL;
  }
  trt_engine *e = calloc(1, sizeof *e);
  e->num_profiles = 1;
  strcpy(e->op, "identity");
  char *save = NULL;
  int line_no = 1;
  for (char *line = strtok_r(text + 21, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    line_no++;
    char kind[16], name[NAME_LEN], dims[128], rest[512];
    int dtype;
    if (line[0] == 0 || line[0] == '#') continue;
    if (sscanf(line, "profiles %d", &e->num_profiles) == 1) continue;
    if (sscanf(line, "op %31s %lf", e->op, &e->scale) >= 1) continue;
    rest[0] = 0;
    int n = sscanf(line, "%15s %127s %d %127s %511[^\n]", kind, name, &dtype, dims, rest);
    if (n < 4 || e->num_io >= MAX_IO || (strcmp(kind, "input") && strcmp(kind, "output"))) {
      set_error("double: bad engine line %ld", (long)line_no);
      goto fail;
    }
    io_desc *io = &e->io[e->num_io++];
    strcpy(io->name, name);
    io->mode = strcmp(kind, "input") == 0 ? TRT_IO_INPUT : TRT_IO_OUTPUT;
    io->dtype = dtype;
    io->rank = parse_dims(dims, io->dims);
    if (io->rank < 0) { set_error("double: bad dims on line %ld", (long)line_no); goto fail; }
    if (io->mode == TRT_IO_INPUT) {
      char *psave = NULL;
      int p = 0;
      for (char *triple = strtok_r(rest, " ", &psave); triple && p < MAX_PROFILES; triple = strtok_r(NULL, " ", &psave), p++) {
        char *parts[3] = {triple, NULL, NULL};
        parts[1] = strchr(parts[0], '/');
        if (parts[1]) { *parts[1]++ = 0; parts[2] = strchr(parts[1], '/'); }
        if (!parts[1] || !parts[2]) { set_error("double: bad profile on line %ld", (long)line_no); goto fail; }
        *parts[2]++ = 0;
        for (int s = 0; s < 3; s++) {
          if (parse_dims(parts[s], io->profile[p][s]) != io->rank) {
            set_error("double: profile rank differs from dims on line %ld", (long)line_no);
            goto fail;
          }
        }
      }
      if (p < e->num_profiles) {
        /* No profile given: the engine's own dims, -1 as 1..1<<20. */
        for (; p < e->num_profiles; p++)
          for (int d = 0; d < io->rank; d++) {
            io->profile[p][0][d] = io->dims[d] < 0 ? 1 : io->dims[d];
            io->profile[p][1][d] = io->profile[p][0][d];
            io->profile[p][2][d] = io->dims[d] < 0 ? (1 << 20) : io->dims[d];
          }
      }
    }
  }
  free(text);
  return e;
fail:
  free(text);
  free(e);
  return NULL;
}

void trt_engine_destroy(trt_engine *engine) { free(engine); }
int32_t trt_engine_num_io(const trt_engine *e) { return e ? e->num_io : -1; }
int32_t trt_engine_num_profiles(const trt_engine *e) { return e ? e->num_profiles : -1; }

static const io_desc *io_at(const trt_engine *e, int32_t index) {
  if (!e || index < 0 || index >= e->num_io) {
    set_error("double: no I/O tensor at index %ld", (long)index);
    return NULL;
  }
  return &e->io[index];
}

const char *trt_engine_io_name(const trt_engine *e, int32_t index) { const io_desc *io = io_at(e, index); return io ? io->name : NULL; }
int32_t trt_engine_io_mode(const trt_engine *e, int32_t index) { const io_desc *io = io_at(e, index); return io ? io->mode : -1; }
int32_t trt_engine_io_dtype(const trt_engine *e, int32_t index) { const io_desc *io = io_at(e, index); return io ? io->dtype : -1; }
int32_t trt_engine_io_is_shape_tensor(const trt_engine *e, int32_t index) { return io_at(e, index) ? 0 : -1; }

int32_t trt_engine_io_shape(const trt_engine *e, int32_t index, int64_t *dims) {
  const io_desc *io = io_at(e, index);
  if (!io) return -1;
  memcpy(dims, io->dims, sizeof(int64_t) * io->rank);
  return io->rank;
}

int32_t trt_engine_io_profile_shape(const trt_engine *e, int32_t index, int32_t profile, int32_t selector, int64_t *dims) {
  const io_desc *io = io_at(e, index);
  if (!io) return -1;
  if (io->mode != TRT_IO_INPUT || profile < 0 || profile >= e->num_profiles || selector < 0 || selector > 2) {
    set_error("double: no profile %d shape for tensor '%s'", profile, io->name);
    return -1;
  }
  memcpy(dims, io->profile[profile][selector], sizeof(int64_t) * io->rank);
  return io->rank;
}

trt_context *trt_context_create(trt_engine *e, int32_t profile) {
  if (!e || profile < 0 || profile >= e->num_profiles) {
    set_error("double: invalid optimization profile %d", profile);
    return NULL;
  }
  trt_context *c = calloc(1, sizeof *c);
  c->engine = e;
  c->profile = profile;
  return c;
}

void trt_context_destroy(trt_context *c) {
  if (!c) return;
  for (int i = 0; i < MAX_IO; i++) free(c->state[i].data);
  free(c);
}

static int find(trt_context *c, const char *name) {
  if (!c || !name) { set_error("double: null context or name"); return -1; }
  for (int i = 0; i < c->engine->num_io; i++)
    if (strcmp(c->engine->io[i].name, name) == 0) return i;
  set_error("double: no tensor named '%s'", name);
  return -1;
}

int32_t trt_context_set_input_shape(trt_context *c, const char *name, const int64_t *dims, int32_t nb_dims) {
  int i = find(c, name);
  if (i < 0) return TRT_ERR_INVALID;
  const io_desc *io = &c->engine->io[i];
  if (io->mode != TRT_IO_INPUT) { set_error("double: '%s' is not an input", name); return TRT_ERR_INVALID; }
  if (nb_dims != io->rank) {
    set_error("double: input '%s' has rank %d, got %d dims", name, io->rank, nb_dims);
    return TRT_ERR_SHAPE;
  }
  for (int d = 0; d < nb_dims; d++) {
    const int64_t lo = io->profile[c->profile][0][d], hi = io->profile[c->profile][2][d];
    if (dims[d] < lo || dims[d] > hi || (io->dims[d] >= 0 && dims[d] != io->dims[d])) {
      set_error("double: input '%s' dim %d = %lld is outside profile %d [%lld, %lld]", name, d,
               (long long)dims[d], c->profile, (long long)lo, (long long)hi);
      return TRT_ERR_SHAPE;
    }
  }
  memcpy(c->state[i].shape, dims, sizeof(int64_t) * nb_dims);
  c->state[i].shape_set = 1;
  return TRT_OK;
}

/* Index of the input an output's shape follows. */
static int source_of(trt_context *c, int out) {
  int k = 0, inputs = 0, first = -1;
  for (int i = 0; i < c->engine->num_io; i++) {
    if (c->engine->io[i].mode == TRT_IO_INPUT) { if (first < 0) first = i; inputs++; }
  }
  if (strcmp(c->engine->op, "identity") != 0) return first;
  for (int i = 0; i < out; i++) if (c->engine->io[i].mode == TRT_IO_OUTPUT) k++;
  for (int i = 0, seen = 0; i < c->engine->num_io; i++)
    if (c->engine->io[i].mode == TRT_IO_INPUT && seen++ == k) return i;
  (void)inputs;
  return first;
}

int32_t trt_context_tensor_shape(trt_context *c, const char *name, int64_t *dims) {
  int i = find(c, name);
  if (i < 0) return -1;
  int src = c->engine->io[i].mode == TRT_IO_INPUT ? i : source_of(c, i);
  if (src < 0 || !c->state[src].shape_set) {
    set_error("double: shape of '%s' unknown until input shapes are set", name);
    return -1;
  }
  memcpy(dims, c->state[src].shape, sizeof(int64_t) * c->engine->io[src].rank);
  return c->engine->io[src].rank;
}

static int64_t volume(const int64_t *dims, int rank) {
  int64_t v = 1;
  for (int d = 0; d < rank; d++) v *= dims[d];
  return v;
}

int32_t trt_context_write_input(trt_context *c, const char *name, const void *host, uint64_t bytes) {
  int i = find(c, name);
  if (i < 0) return TRT_ERR_INVALID;
  const io_desc *io = &c->engine->io[i];
  if (!c->state[i].shape_set) { set_error("double: shape of input '%s' not set", name); return TRT_ERR_INVALID; }
  uint64_t expected = (uint64_t)(volume(c->state[i].shape, io->rank) * element_size(io->dtype));
  if (bytes != expected) {
    set_error("double: input '%s' needs %llu bytes, got %llu", name, (unsigned long long)expected, (unsigned long long)bytes);
    return TRT_ERR_INVALID;
  }
  free(c->state[i].data);
  c->state[i].data = malloc(bytes ? bytes : 1);
  memcpy(c->state[i].data, host, bytes);
  c->state[i].bytes = bytes;
  return TRT_OK;
}

int32_t trt_context_enqueue(trt_context *c) {
  if (!c) return TRT_ERR_INVALID;
  trt_engine *e = c->engine;
  if (strcmp(e->op, "crash") == 0) abort();
  if (strcmp(e->op, "fail") == 0) {
    set_error("double: enqueueV3 failed (op 'fail')");
    return TRT_ERR_RUNTIME;
  }
  int in0 = -1, in1 = -1;
  for (int i = 0; i < e->num_io; i++)
    if (e->io[i].mode == TRT_IO_INPUT) { if (in0 < 0) in0 = i; else if (in1 < 0) in1 = i; }
  for (int i = 0; i < e->num_io; i++) {
    if (e->io[i].mode == TRT_IO_INPUT) {
      if (!c->state[i].data) { set_error("double: input '%s' not written", e->io[i].name); return TRT_ERR_INVALID; }
    }
  }
  for (int o = 0; o < e->num_io; o++) {
    if (e->io[o].mode != TRT_IO_OUTPUT) continue;
    int src = source_of(c, o);
    io_state *s = &c->state[src];
    free(c->state[o].data);
    c->state[o].bytes = s->bytes;
    c->state[o].data = malloc(s->bytes ? s->bytes : 1);
    const int64_t n = volume(s->shape, e->io[src].rank);
    if (strcmp(e->op, "identity") == 0) {
      memcpy(c->state[o].data, s->data, s->bytes);
    } else if (strcmp(e->op, "add") == 0 && in1 >= 0) {
      const void *a = c->state[in0].data, *b = c->state[in1].data;
      void *r = c->state[o].data;
      if (c->state[in1].bytes != s->bytes) { set_error("double: add needs equal shapes"); return TRT_ERR_SHAPE; }
      for (int64_t k = 0; k < n; k++) {
        switch (e->io[in0].dtype) {
          case 0: ((float *)r)[k] = ((const float *)a)[k] + ((const float *)b)[k]; break;
          case 3: ((int32_t *)r)[k] = ((const int32_t *)a)[k] + ((const int32_t *)b)[k]; break;
          case 8: ((int64_t *)r)[k] = ((const int64_t *)a)[k] + ((const int64_t *)b)[k]; break;
          default: set_error("double: add supports FP32/INT32/INT64"); return TRT_ERR_UNSUPPORTED;
        }
      }
    } else if (strcmp(e->op, "addsub") == 0 && in1 >= 0 && e->io[in0].dtype == 0 && c->state[in1].bytes == s->bytes) {
      const float *a = (const float *)c->state[in0].data, *b = (const float *)c->state[in1].data;
      const int second = o > 0 && e->io[o - 1].mode == TRT_IO_OUTPUT; /* the second output is the difference */
      for (int64_t k = 0; k < n; k++) ((float *)c->state[o].data)[k] = second ? a[k] - b[k] : a[k] + b[k];
    } else if (strcmp(e->op, "scale") == 0 && e->io[in0].dtype == 0) {
      for (int64_t k = 0; k < n; k++) ((float *)c->state[o].data)[k] = (float)(((const float *)s->data)[k] * e->scale);
    } else {
      set_error("double: unsupported op '%s' for these tensors", e->op);
      return TRT_ERR_UNSUPPORTED;
    }
  }
  return TRT_OK;
}

int32_t trt_context_synchronize(trt_context *c) { return c ? TRT_OK : TRT_ERR_INVALID; }

int32_t trt_context_read_output(trt_context *c, const char *name, void *host, uint64_t bytes) {
  int i = find(c, name);
  if (i < 0) return TRT_ERR_INVALID;
  if (!c->state[i].data || c->state[i].bytes != bytes) {
    set_error("double: output '%s' has %llu bytes, asked for %llu", name,
             (unsigned long long)c->state[i].bytes, (unsigned long long)bytes);
    return TRT_ERR_INVALID;
  }
  memcpy(host, c->state[i].data, bytes);
  return TRT_OK;
}
