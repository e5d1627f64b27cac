/**
 * The ONE file that touches FFI: koffi declarations of the shim's C ABI (`native/trt_shim.h`) and
 * thin typed wrappers (TrtShim → TrtEngine → TrtContext). Whatever implements the ABI is loaded
 * from a path: the real shim (`libtritium_trt.so`, built by `native/build.sh` against TensorRT 10
 * and CUDA) or, in tests, the test double. Failures of the C calls throw TrtCallError carrying the
 * status code and `trt_last_error()`; a library that cannot be loaded throws an InferError naming
 * it, what it needs (libnvinfer, libcudart) and how to provide it.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi, { type LibraryHandle } from 'koffi';
import { InferError } from '@tritium/core';

/** Must equal TRT_SHIM_ABI_VERSION of the library. */
export const TRT_SHIM_ABI_VERSION = 1;
/** TRT_MAX_DIMS: the most dims a tensor has. */
export const TRT_MAX_DIMS = 8;
/** Env var naming the shim library to load (overrides the built default). */
export const SHIM_ENV = 'TRITIUM_TRT_SHIM';

/** Status codes of the ABI (TRT_ERR_*). */
export const TrtStatus = { OK: 0, INVALID: 1, SHAPE: 2, CUDA: 3, RUNTIME: 4, UNSUPPORTED: 5 } as const;
const STATUS_NAMES = ['OK', 'INVALID', 'SHAPE', 'CUDA', 'RUNTIME', 'UNSUPPORTED'];

/** A failed shim call: `status` is a TrtStatus value, the message is the shim's `trt_last_error()`. */
export class TrtCallError extends Error {
  constructor(
    readonly status: number,
    readonly call: string,
    detail: string,
  ) {
    super(`${call} failed (${STATUS_NAMES[status] ?? `status ${status}`}): ${detail || 'no detail'}`);
    this.name = 'TrtCallError';
  }
}

/** Where `native/build.sh` puts the shim. Resolved from this source file, so call it on the main thread (bundled workers move `import.meta.url`). */
export function defaultShimPath(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'build', 'libtritium_trt.so');
}

/** The shim path to load: explicit option, else `$TRITIUM_TRT_SHIM`, else the built default. */
export function resolveShimPath(explicit?: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return explicit || env[SHIM_ENV] || defaultShimPath();
}

const HOW_TO =
  'The TensorRT backend needs TensorRT 10 (libnvinfer.so.10) and the CUDA runtime (libcudart.so.12) on the library path, ' +
  'and the Tritium shim built against them: install TensorRT 10 and CUDA, set TENSORRT_HOME (and CUDA_HOME if not /usr/local/cuda), ' +
  `run packages/backend-tensorrt/native/build.sh, or point ${SHIM_ENV} at a built libtritium_trt.so`;

/** The load failure for a shim at `path`; `cause` is the dynamic loader's message, if any. */
export function shimUnavailableError(path: string, cause?: string): InferError {
  const what = existsSync(path) ? `cannot load the TensorRT shim '${path}'${cause ? ` (${cause})` : ''}` : `the TensorRT shim '${path}' does not exist (not built on this machine)`;
  return new InferError('UNAVAILABLE', `TensorRT backend unavailable: ${what}. ${HOW_TO}`);
}

const engineType = koffi.opaque('trt_engine');
const contextType = koffi.opaque('trt_context');
const enginePtr = koffi.pointer(engineType);
const contextPtr = koffi.pointer(contextType);

/** The raw C functions (typed). Pointers are koffi externals. */
interface RawShim {
  trt_shim_abi_version(): number;
  trt_shim_implementation(): string;
  trt_last_error(): string;
  trt_engine_deserialize(data: Uint8Array, size: number, device: number): unknown;
  trt_engine_destroy(engine: unknown): void;
  trt_engine_num_io(engine: unknown): number;
  trt_engine_num_profiles(engine: unknown): number;
  trt_engine_io_name(engine: unknown, index: number): string | null;
  trt_engine_io_mode(engine: unknown, index: number): number;
  trt_engine_io_dtype(engine: unknown, index: number): number;
  trt_engine_io_is_shape_tensor(engine: unknown, index: number): number;
  trt_engine_io_shape(engine: unknown, index: number, dims: BigInt64Array): number;
  trt_engine_io_profile_shape(engine: unknown, index: number, profile: number, selector: number, dims: BigInt64Array): number;
  trt_context_create(engine: unknown, profile: number): unknown;
  trt_context_destroy(context: unknown): void;
  trt_context_set_input_shape(context: unknown, name: string, dims: BigInt64Array, nbDims: number): number;
  trt_context_tensor_shape(context: unknown, name: string, dims: BigInt64Array): number;
  trt_context_write_input(context: unknown, name: string, host: Uint8Array, bytes: number): number;
  trt_context_enqueue(context: unknown): number;
  trt_context_synchronize(context: unknown): number;
  trt_context_read_output(context: unknown, name: string, host: Uint8Array, bytes: number): number;
}

function declare(lib: LibraryHandle): RawShim {
  const f = (proto: string) => lib.func(proto) as unknown as (...args: unknown[]) => unknown;
  const E = 'trt_engine *';
  const C = 'trt_context *';
  return {
    trt_shim_abi_version: f('int32_t trt_shim_abi_version()'),
    trt_shim_implementation: f('const char *trt_shim_implementation()'),
    trt_last_error: f('const char *trt_last_error()'),
    trt_engine_deserialize: f(`${E}trt_engine_deserialize(const void *data, uint64_t size, int32_t device)`),
    trt_engine_destroy: f(`void trt_engine_destroy(${E}engine)`),
    trt_engine_num_io: f(`int32_t trt_engine_num_io(${E}engine)`),
    trt_engine_num_profiles: f(`int32_t trt_engine_num_profiles(${E}engine)`),
    trt_engine_io_name: f(`const char *trt_engine_io_name(${E}engine, int32_t index)`),
    trt_engine_io_mode: f(`int32_t trt_engine_io_mode(${E}engine, int32_t index)`),
    trt_engine_io_dtype: f(`int32_t trt_engine_io_dtype(${E}engine, int32_t index)`),
    trt_engine_io_is_shape_tensor: f(`int32_t trt_engine_io_is_shape_tensor(${E}engine, int32_t index)`),
    trt_engine_io_shape: f(`int32_t trt_engine_io_shape(${E}engine, int32_t index, _Out_ int64_t *dims)`),
    trt_engine_io_profile_shape: f(
      `int32_t trt_engine_io_profile_shape(${E}engine, int32_t index, int32_t profile, int32_t selector, _Out_ int64_t *dims)`,
    ),
    trt_context_create: f(`${C}trt_context_create(${E}engine, int32_t profile)`),
    trt_context_destroy: f(`void trt_context_destroy(${C}context)`),
    trt_context_set_input_shape: f(`int32_t trt_context_set_input_shape(${C}context, const char *name, const int64_t *dims, int32_t nb_dims)`),
    trt_context_tensor_shape: f(`int32_t trt_context_tensor_shape(${C}context, const char *name, _Out_ int64_t *dims)`),
    trt_context_write_input: f(`int32_t trt_context_write_input(${C}context, const char *name, const void *host, uint64_t bytes)`),
    trt_context_enqueue: f(`int32_t trt_context_enqueue(${C}context)`),
    trt_context_synchronize: f(`int32_t trt_context_synchronize(${C}context)`),
    trt_context_read_output: f(`int32_t trt_context_read_output(${C}context, const char *name, _Inout_ void *host, uint64_t bytes)`),
  } as unknown as RawShim;
}

/** Min/opt/max dims of one input in one optimization profile. */
export interface ProfileShape {
  readonly min: readonly number[];
  readonly opt: readonly number[];
  readonly max: readonly number[];
}

/** One I/O tensor of an engine, as the engine reports it. */
export interface EngineTensor {
  readonly name: string;
  readonly mode: 'input' | 'output';
  /** nvinfer1::DataType value. */
  readonly trtType: number;
  readonly isShapeTensor: boolean;
  /** Dims, -1 where dynamic. */
  readonly dims: readonly number[];
  /** Inputs: one entry per optimization profile. Outputs: empty. */
  readonly profiles: readonly ProfileShape[];
}

/** An engine's signature. */
export interface EngineInfo {
  readonly tensors: readonly EngineTensor[];
  readonly numProfiles: number;
}

const dimsBuffer = () => new BigInt64Array(TRT_MAX_DIMS);
const toDims = (buf: BigInt64Array, rank: number) => Array.from(buf.subarray(0, rank), Number);

/** A loaded shim library. */
export class TrtShim {
  private static readonly cache = new Map<string, TrtShim>();

  private constructor(
    readonly path: string,
    private readonly raw: RawShim,
    /** What the library says it is (`tensorrt 10.x` or the test double). */
    readonly implementation: string,
  ) {}

  /** Loads (once per path and thread) the library at `path`; throws shimUnavailableError when it cannot. */
  static load(path: string): TrtShim {
    const cached = TrtShim.cache.get(path);
    if (cached) return cached;
    if (!existsSync(path)) throw shimUnavailableError(path);
    let raw: RawShim;
    try {
      raw = declare(koffi.load(path));
    } catch (err) {
      throw shimUnavailableError(path, (err as Error).message);
    }
    const version = raw.trt_shim_abi_version();
    if (version !== TRT_SHIM_ABI_VERSION) {
      throw new InferError('UNAVAILABLE', `TensorRT backend unavailable: the shim '${path}' has ABI version ${version}, expected ${TRT_SHIM_ABI_VERSION}; rebuild it with packages/backend-tensorrt/native/build.sh`);
    }
    const shim = new TrtShim(path, raw, raw.trt_shim_implementation());
    TrtShim.cache.set(path, shim);
    return shim;
  }

  /** Deserializes engine bytes on CUDA device `device`. */
  deserialize(bytes: Uint8Array, device: number): TrtEngine {
    const handle = this.raw.trt_engine_deserialize(bytes, bytes.byteLength, device);
    if (!handle) throw this.fail(TrtStatus.RUNTIME, 'trt_engine_deserialize');
    return new TrtEngine(this, this.raw, handle);
  }

  /** @internal */
  fail(status: number, call: string): TrtCallError {
    return new TrtCallError(status, call, this.raw.trt_last_error());
  }
}

/** A native object of the shim behind its handle: any use after `destroy()` is refused, never a dangling pointer. */
abstract class ShimObject {
  private handle: unknown;

  protected constructor(
    protected readonly shim: TrtShim,
    protected readonly raw: RawShim,
    handle: unknown,
    private readonly what: 'engine' | 'context',
  ) {
    this.handle = handle;
  }

  protected get h(): unknown {
    if (!this.handle) throw new TrtCallError(TrtStatus.INVALID, this.what, `${this.what} already destroyed`);
    return this.handle;
  }

  /** Frees the native object once; later calls and uses are refused. */
  protected release(free: (handle: unknown) => void): void {
    if (this.handle) free(this.handle);
    this.handle = undefined;
  }
}

/** A deserialized engine. */
export class TrtEngine extends ShimObject {
  /** @internal */
  constructor(shim: TrtShim, raw: RawShim, handle: unknown) {
    super(shim, raw, handle, 'engine');
  }

  /** Reads every I/O tensor's name, mode, type, dims and (inputs) profile shapes. */
  info(): EngineInfo {
    const h = this.h;
    const count = this.raw.trt_engine_num_io(h);
    const numProfiles = this.raw.trt_engine_num_profiles(h);
    if (count < 0 || numProfiles < 0) throw this.shim.fail(TrtStatus.INVALID, 'trt_engine_num_io');
    const tensors: EngineTensor[] = [];
    for (let i = 0; i < count; i++) {
      const name = this.raw.trt_engine_io_name(h, i);
      const mode = this.raw.trt_engine_io_mode(h, i);
      const trtType = this.raw.trt_engine_io_dtype(h, i);
      const shapeTensor = this.raw.trt_engine_io_is_shape_tensor(h, i);
      const buf = dimsBuffer();
      const rank = this.raw.trt_engine_io_shape(h, i, buf);
      if (name === null || mode < 0 || trtType < 0 || shapeTensor < 0 || rank < 0) throw this.shim.fail(TrtStatus.INVALID, `reading I/O tensor ${i}`);
      const dims = toDims(buf, rank);
      const profiles: ProfileShape[] = [];
      if (mode === 1) {
        for (let p = 0; p < numProfiles; p++) {
          const [min, opt, max] = [0, 1, 2].map((selector) => {
            const b = dimsBuffer();
            const r = this.raw.trt_engine_io_profile_shape(h, i, p, selector, b);
            if (r < 0) throw this.shim.fail(TrtStatus.INVALID, `trt_engine_io_profile_shape('${name}', ${p})`);
            return toDims(b, r);
          }) as [number[], number[], number[]];
          profiles.push({ min, opt, max });
        }
      }
      tensors.push({ name, mode: mode === 1 ? 'input' : 'output', trtType, isShapeTensor: shapeTensor === 1, dims, profiles });
    }
    return { tensors, numProfiles };
  }

  /** An execution context (with its own CUDA stream) on optimization profile `profile`. */
  createContext(profile: number): TrtContext {
    const handle = this.raw.trt_context_create(this.h, profile);
    if (!handle) throw this.shim.fail(TrtStatus.RUNTIME, 'trt_context_create');
    return new TrtContext(this.shim, this.raw, handle);
  }

  destroy(): void {
    this.release((h) => this.raw.trt_engine_destroy(h));
  }
}

/** An execution context: one CUDA stream, device buffers, pinned staging buffers. */
export class TrtContext extends ShimObject {
  /** @internal */
  constructor(shim: TrtShim, raw: RawShim, handle: unknown) {
    super(shim, raw, handle, 'context');
  }

  private check(status: number, call: string): void {
    if (status !== TrtStatus.OK) throw this.shim.fail(status, call);
  }

  setInputShape(name: string, dims: readonly number[]): void {
    if (dims.length > TRT_MAX_DIMS) throw new TrtCallError(TrtStatus.SHAPE, 'trt_context_set_input_shape', `${dims.length} dims (at most ${TRT_MAX_DIMS})`);
    const buf = BigInt64Array.from(dims, (d) => BigInt(d));
    this.check(this.raw.trt_context_set_input_shape(this.h, name, buf, dims.length), `trt_context_set_input_shape('${name}')`);
  }

  /** The current shape of `name` (outputs: resolved from the input shapes set). */
  tensorShape(name: string): number[] {
    const buf = dimsBuffer();
    const rank = this.raw.trt_context_tensor_shape(this.h, name, buf);
    if (rank < 0) throw this.shim.fail(TrtStatus.SHAPE, `trt_context_tensor_shape('${name}')`);
    return toDims(buf, rank);
  }

  writeInput(name: string, data: Uint8Array): void {
    this.check(this.raw.trt_context_write_input(this.h, name, data, data.byteLength), `trt_context_write_input('${name}')`);
  }

  enqueue(): void {
    this.check(this.raw.trt_context_enqueue(this.h), 'trt_context_enqueue');
  }

  synchronize(): void {
    this.check(this.raw.trt_context_synchronize(this.h), 'trt_context_synchronize');
  }

  /** Copies output `name` into `out` (its byte length must equal the output's size). */
  readOutput(name: string, out: Uint8Array): void {
    this.check(this.raw.trt_context_read_output(this.h, name, out, out.byteLength), `trt_context_read_output('${name}')`);
  }

  destroy(): void {
    this.release((h) => this.raw.trt_context_destroy(h));
  }
}

// Keep the pointer types referenced (koffi registers them by name for the prototypes above).
void enginePtr;
void contextPtr;
