/**
 * Triton's classification extension, applied by the transports: an output requested with
 * parameter `classification: k` comes back as BYTES `[batch, k]` (or `[k]` without batching) of
 * `"<value>:<index>"`, highest values first. The value is printed as C++ std::to_string prints the
 * output's own type (Triton's AddClassResults<T>): 6 decimals for FP32/FP64, the exact integer for
 * the integer types. Any other datatype (BYTES, BOOL, FP16, BF16) is refused as Triton refuses it:
 * FP16/BF16 are held as raw 16-bit patterns here, and ranking those ranked every negative value above
 * every positive one. Labels (`label_filename`) are not read by Tritium yet.
 */
import { InferError, typedView, type DataType, type InferResponse, type RequestedOutput, type Tensor } from '@tritium/core';
import { BytesWriter } from '@tritium/core/tensor';
import type { TransportContext } from './context.ts';

/** The datatypes Triton's TopkClassifications accepts, and whether their values print as floats. */
const CLASSIFIABLE: Partial<Record<DataType, 'float' | 'integer'>> = {
  UINT8: 'integer',
  UINT16: 'integer',
  UINT32: 'integer',
  UINT64: 'integer',
  INT8: 'integer',
  INT16: 'integer',
  INT32: 'integer',
  INT64: 'integer',
  FP32: 'float',
  FP64: 'float',
};

type Value = number | bigint;

/**
 * Whether (va, ia) ranks above (vb, ib): higher value first, then lower index; NaN below every number.
 * Values are compared in their own type (64-bit integers as bigint, exact past 2^53).
 */
function above(va: Value, ia: number, vb: Value, ib: number): boolean {
  if (va !== va) return vb !== vb && ia < ib;
  if (vb !== vb) return true;
  return va > vb || (va === vb && ia < ib);
}

/**
 * The indices of the `top` highest of `count` values (`at(i)`), highest first. One pass with a heap
 * of `top` indices whose root ranks lowest, then the heap emptied from the back: no object per
 * element and no sort of the whole row. It was an [value, index] array per element and a full sort
 * on the main thread: classification 1 of a 4M-element output took 7.7 s of CPU there (16M, within
 * --http-max-input-size, took the server down for tens of seconds).
 */
function topOf(at: (i: number) => Value, count: number, top: number): Int32Array {
  const heap = new Int32Array(top);
  let size = 0;
  const ranksAbove = (a: number, b: number): boolean => above(at(a), a, at(b), b);
  // Sift the entry at `k` down / up so every parent ranks below its children.
  const down = (k: number): void => {
    for (;;) {
      const l = 2 * k + 1;
      if (l >= size) return;
      const r = l + 1;
      const c = r < size && ranksAbove(heap[l]!, heap[r]!) ? r : l;
      if (!ranksAbove(heap[k]!, heap[c]!)) return;
      [heap[k], heap[c]] = [heap[c]!, heap[k]!];
      k = c;
    }
  };
  for (let i = 0; i < count; i++) {
    if (size < top) {
      let k = size++;
      heap[k] = i;
      while (k > 0) {
        const p = (k - 1) >> 1;
        if (!ranksAbove(heap[p]!, heap[k]!)) break;
        [heap[k], heap[p]] = [heap[p]!, heap[k]!];
        k = p;
      }
    } else if (top > 0 && ranksAbove(i, heap[0]!)) {
      heap[0] = i;
      down(0);
    }
  }
  const indices = new Int32Array(size);
  // The root ranks lowest: taking it repeatedly fills the result from its end.
  for (let n = size - 1; n >= 0; n--) {
    indices[n] = heap[0]!;
    size--;
    heap[0] = heap[size]!;
    down(0);
  }
  return indices;
}

/**
 * A float as C++ std::to_string prints it (printf "%f"): 6 decimals, every digit of a large value
 * (toFixed switches to exponent notation from 1e21), and `inf`/`nan` as glibc writes them.
 */
function cFixed(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return Math.abs(v) < 1e21 ? v.toFixed(6) : `${BigInt(v)}.000000`;
}

function classify(t: Tensor, k: number, batched: boolean): Tensor {
  const kind = CLASSIFIABLE[t.datatype];
  if (!kind) throw new InferError('INVALID_ARG', `class result not available for output due to unsupported type '${t.datatype}'`);
  const view = typedView(t) as ArrayLike<Value>;
  const rows = batched ? (t.shape[0] ?? 1) : 1;
  const per = rows > 0 ? view.length / rows : 0;
  const top = Math.min(k, per);
  // Written element by element into the BYTES layout: no array of strings, whatever rows * top is.
  const out = new BytesWriter(Math.min(rows * top * 24, 1 << 20));
  for (let r = 0; r < rows; r++) {
    const from = r * per;
    const at = (i: number): Value => view[from + i]!;
    for (const i of topOf(at, per, top)) {
      const v = at(i);
      out.add(`${kind === 'float' ? cFixed(v as number) : String(v)}:${i}`);
    }
  }
  return { name: t.name, datatype: 'BYTES', shape: batched ? [rows, top] : [top], data: out.finish() };
}

/** Rewrites the outputs asked for with `classification`; other outputs pass through. */
export function applyClassification(response: InferResponse, requested: readonly RequestedOutput[] | undefined, maxBatchSize: number): InferResponse {
  const wanted = new Map<string, number>();
  for (const o of requested ?? []) {
    const k = o.parameters?.['classification'];
    if (k === undefined) continue;
    const n = typeof k === 'bigint' ? Number(k) : k;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
      throw new InferError('INVALID_ARG', `classification count for output '${o.name}' must be a positive integer`);
    }
    wanted.set(o.name, n);
  }
  if (wanted.size === 0) return response;
  return {
    ...response,
    outputs: response.outputs.map((t) => (wanted.has(t.name) ? classify(t, wanted.get(t.name)!, maxBatchSize > 0) : t)),
  };
}

/** True when any requested output asks for classification (so the transport needs the config). */
export function wantsClassification(requested: readonly RequestedOutput[] | undefined): boolean {
  return !!requested?.some((o) => o.parameters?.['classification'] !== undefined);
}

/**
 * A response as the transports send it: classified when the request asks for it (the model's
 * max_batch_size says whether the first dimension is the batch). Every inference reply goes through
 * here: HTTP, gRPC unary and each response on a gRPC stream (the stream sent the raw tensors).
 */
export function classified(response: InferResponse, requested: readonly RequestedOutput[] | undefined, ctx: Pick<TransportContext, 'api'>, model: string): InferResponse {
  if (!wantsClassification(requested)) return response;
  return applyClassification(response, requested, ctx.api.modelConfig(model).max_batch_size);
}
