/**
 * The whole host ⇄ worker protocol: a branded discriminated union, seven kinds to the worker and nine
 * back. Plain data only (structured clone / Node's advanced IPC serialization); tensor bytes travel
 * as transferred ArrayBuffers where the channel supports transfer. InferErrors cross as `{code, message}`.
 */
import { InferError, type WireError } from '../errors.ts';
import type { ExecuteTimings } from '../backend/spi.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import { packBatch, unpackBatch, type PackedBatch } from './batch-codec.ts';
import type { MetricOp } from '../metrics/custom-metrics.ts';
import type { ReadinessPolicy } from './types.ts';

/** Brand so a stray message on the same port (e.g. user code's own postMessage) is never mistaken for ours. */
export const BRAND = 'tritium-worker/1' as const;

/** An InferRequest as it crosses: everything but the (uncloneable) signal and the server-side state (callers, trace hooks). */
export type WireRequest = Omit<InferRequest, 'signal' | 'callers' | 'trace' | 'computeSink' | 'carried' | 'tokens'>;

/** One slot of an execute's results. */
export type WireResult = { readonly ok: true; readonly response: InferResponse } | { readonly ok: false; readonly error: WireError };

export interface InitPayload {
  /** file:// URL of the entry module exporting `createInstance`. */
  readonly entry: string;
  readonly init: unknown;
  readonly model: string;
  readonly instanceName: string;
  /** Ask the instance's `isReady()` this often (see ReadinessPolicy); absent: never. */
  readonly readiness?: ReadinessPolicy;
}

/** Host → worker. */
export type ToWorker = { readonly brand: typeof BRAND } & (
  | { readonly t: 'init'; readonly payload: InitPayload }
  | {
      readonly t: 'execute';
      readonly id: number;
      /** The batch, packed (see batch-codec.ts), or `batch` as plain objects when it cannot be packed. */
      readonly packed?: PackedBatch;
      readonly batch?: readonly WireRequest[];
      readonly decoupled: boolean;
    }
  | { readonly t: 'abort'; readonly id: number }
  | {
      readonly t: 'bls-reply';
      readonly call: number;
      /** A final (non-stream) response, or one streamed response when `more` is true. */
      readonly response?: InferResponse;
      readonly error?: WireError;
      /** Stream calls: true for a streamed response, false/undefined when the stream completed. */
      readonly more?: boolean;
    }
  /**
   * Decoupled: the reader of request `index` of execute `id` took `bytes` more of its responses, so
   * the worker may send that many more (see sink-flow.ts).
   */
  | { readonly t: 'sink-ack'; readonly id: number; readonly index: number; readonly bytes: number }
  | { readonly t: 'dispose' }
  | { readonly t: 'metric-reply'; readonly call: number; readonly value?: number; readonly error?: WireError }
);

export type LogLevel = 'error' | 'warn' | 'info' | 'verbose';

/** Worker → host. */
export type FromWorker = { readonly brand: typeof BRAND } & (
  | { readonly t: 'ready' }
  /** createInstance failed, or the worker is about to die for a reason it can still report. */
  | { readonly t: 'fatal'; readonly error: WireError }
  /** Ends an execute: per-request results (empty for decoupled), or `error` failing the whole batch. */
  | {
      readonly t: 'result';
      readonly id: number;
      readonly results?: readonly WireResult[];
      /** Results packed (see batch-codec.ts); used instead of `results` when possible. */
      readonly packed?: PackedBatch;
      /** The results are ONE response for the whole batch, for the host to split by rows (WholeBatchOutput). */
      readonly whole?: boolean;
      readonly error?: WireError;
      readonly timings?: ExecuteTimings;
    }
  /** Decoupled: one response for request `index` of execute `id`, or its completion (`done`). */
  | {
      readonly t: 'sink';
      readonly id: number;
      readonly index: number;
      readonly response?: InferResponse;
      readonly done?: boolean;
      readonly error?: WireError;
    }
  /** BLS: `parent` is the execute the call was made from (undefined outside one, e.g. in createInstance). */
  | { readonly t: 'bls'; readonly call: number; readonly request: WireRequest; readonly stream: boolean; readonly parent?: number }
  /** BLS: the worker no longer wants call `call` (a decoupled iterator's cancel()): cancel it. */
  | { readonly t: 'bls-cancel'; readonly call: number }
  | { readonly t: 'log'; readonly level: LogLevel; readonly message: string; readonly verbosity?: number }
  /** The instance's `isReady()` answer changed: `reason` says why it is not ready. */
  | { readonly t: 'readiness'; readonly ready: boolean; readonly reason?: string }
  /** A custom metric operation (python-like MetricFamily); `call` asks for a `metric-reply`. */
  | { readonly t: 'metric'; readonly op: MetricOp; readonly call?: number }
);

type Body<U> = U extends { readonly brand: typeof BRAND } ? Omit<U, 'brand'> : never;
export type ToWorkerBody = Body<ToWorker>;
export type FromWorkerBody = Body<FromWorker>;

export function isProtocolMessage(value: unknown): value is { brand: typeof BRAND; t: string } {
  return typeof value === 'object' && value !== null && (value as { brand?: unknown }).brand === BRAND;
}

/** Strips the signal (not cloneable), the callers, the trace hooks and the token counts (server state, never shown to a worker); keeps the rest as plain data. */
export function toWireRequest(request: InferRequest): WireRequest {
  const { signal: _signal, callers: _callers, trace: _trace, computeSink: _sink, carried: _carried, tokens: _tokens, ...rest } = request;
  return rest;
}

export function toWireError(error: unknown): WireError {
  const e = InferError.from(error);
  return { code: e.code, message: e.message };
}

/**
 * Makes a tensor's bytes safe and cheap to send: a view that spans its whole (non-shared) ArrayBuffer
 * is sent as is and its buffer listed for transfer when `transfer` allows; any other view (a slice of
 * a pooled Buffer or of a larger body, or shared memory) is first copied into a fresh ArrayBuffer,
 * because cloning a view would copy its WHOLE backing buffer and a pooled Buffer cannot be transferred.
 */
export function prepareTensor(tensor: Tensor, transferList: ArrayBuffer[] | undefined, transferWhole: boolean): Tensor {
  const { data } = tensor;
  const buffer = data.buffer;
  const spansWhole = data.byteOffset === 0 && data.byteLength === buffer.byteLength && buffer instanceof ArrayBuffer;
  if (spansWhole && !transferWhole) {
    // The caller keeps using its buffer: the channel's clone is the one copy.
    return tensor;
  }
  let out = data;
  if (!spansWhole) {
    const copy = new Uint8Array(data.byteLength);
    copy.set(data);
    out = copy;
  }
  if (transferList && !transferList.includes(out.buffer as ArrayBuffer) && out.byteLength > 0) {
    transferList.push(out.buffer as ArrayBuffer);
  }
  return out === data ? tensor : { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, data: out };
}

/** Prepares every tensor of a request for sending (see {@link prepareTensor}). */
export function prepareRequest(request: InferRequest, transferList: ArrayBuffer[] | undefined, transferWhole: boolean): WireRequest {
  const wire = toWireRequest(request);
  return { ...wire, inputs: wire.inputs.map((t) => prepareTensor(t, transferList, transferWhole)) };
}

export function prepareResponse(response: InferResponse, transferList: ArrayBuffer[] | undefined, transferWhole: boolean): InferResponse {
  return { ...response, outputs: response.outputs.map((t) => prepareTensor(t, transferList, transferWhole)) };
}

/**
 * Data received over the channel: a Node Buffer may arrive as a Uint8Array subclass or, over a
 * process's channel, be turned into a plain Uint8Array already; normalise so consumers always see a
 * Uint8Array. A view of a SharedArrayBuffer (a thread can post one) is copied: its sender could
 * rewrite the bytes after the host checked them (wire-check.ts) and before they are served.
 */
export function normalizeTensor(tensor: Tensor): Tensor {
  const { data } = tensor;
  if (data instanceof Uint8Array && data.constructor === Uint8Array && data.buffer instanceof ArrayBuffer) return tensor;
  if (!ArrayBuffer.isView(data)) return { ...tensor, data: new Uint8Array(0) };
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return { ...tensor, data: view.buffer instanceof ArrayBuffer ? view : view.slice() };
}

/** JSON would turn NaN/±Infinity parameters into null: such batches go by structured clone. */
function jsonSafe(parameters: Readonly<Record<string, unknown>> | undefined): void {
  if (!parameters) return;
  for (const k in parameters) {
    const v = parameters[k];
    if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError('non-finite parameter');
  }
}

/** Request fields with their own place in the table, and those that never cross (see toWireRequest). */
const NOT_IN_REQUEST_JSON: ReadonlySet<string> = new Set(['id', 'model', 'version', 'inputs', 'signal', 'callers', 'trace', 'computeSink', 'carried', 'tokens']);

/** Packs requests for an execute message (undefined: send them unpacked). */
export function packRequests(batch: readonly InferRequest[], transferList: ArrayBuffer[] | undefined, transferWhole: boolean): PackedBatch | undefined {
  try {
    return packBatch(
      batch,
      (r, out) => {
        jsonSafe(r.parameters);
        out.uniqueString(r.id);
        out.string(r.model);
        out.number(r.version ?? Number.NaN);
        out.tensors(r.inputs);
        // The rest (requested outputs, parameters, priority, timeout, sequence, ...): JSON, when any.
        let rest: Record<string, unknown> | undefined;
        for (const key in r) {
          const value = (r as unknown as Record<string, unknown>)[key];
          if (value === undefined || NOT_IN_REQUEST_JSON.has(key)) continue;
          (rest ??= {})[key] = value;
        }
        out.json(rest);
      },
      transferList,
      transferWhole,
    );
  } catch {
    return undefined;
  }
}

export function unpackRequests(packed: PackedBatch): InferRequest[] {
  return unpackBatch(packed, (input) => {
    const id = input.string();
    const model = input.string();
    const version = input.number();
    const request: Record<string, unknown> = { id, model, inputs: input.tensors() };
    if (!Number.isNaN(version)) request['version'] = version;
    const rest = input.json();
    if (rest) Object.assign(request, rest);
    return request as unknown as InferRequest;
  });
}

/** Packs an execute's results (large output buffers of the worker are transferred, unless `keep`). */
export function packResults(results: readonly WireResult[], transferList: ArrayBuffer[] | undefined, keep = false): PackedBatch | undefined {
  try {
    return packBatch(
      results,
      (r, out) => {
        if (!r.ok) {
          out.number(0);
          out.json(r.error);
          return;
        }
        const { id, model, version, outputs, parameters } = r.response;
        jsonSafe(parameters);
        out.number(1);
        out.uniqueString(id);
        out.string(model);
        out.number(version);
        out.tensors(outputs);
        out.json(parameters);
      },
      transferList,
      !keep,
    );
  } catch {
    return undefined;
  }
}

/**
 * Unpacks an execute's results. They come from the worker: a field of the wrong type is left for
 * the host's checks (wire-check.ts) to name; only what cannot be read throws here.
 */
export function unpackResults(packed: PackedBatch): WireResult[] {
  return unpackBatch(packed, (input): WireResult => {
    if (input.number() !== 1) return { ok: false, error: input.json() as WireError };
    const id = input.string();
    const model = input.string();
    const version = input.number();
    const outputs = input.tensors();
    const parameters = input.json() as InferResponse['parameters'];
    return { ok: true, response: parameters === undefined ? { id, model, version, outputs } : { id, model, version, outputs, parameters } };
  });
}
