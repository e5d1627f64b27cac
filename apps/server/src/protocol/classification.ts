/**
 * Triton's classification extension, applied by the transports: an output requested with
 * parameter `classification: k` comes back as BYTES `[batch, k]` (or `[k]` without batching) of
 * `"<value>:<index>"`, highest values first (value printed as C++ std::to_string does: 6 decimals).
 * Labels (`label_filename`) are not read by Tritium yet.
 */
import { encodeBytesElements, InferError, typedView, type InferResponse, type RequestedOutput, type Tensor } from '@tritium/core';

/** Whether (va, ia) ranks above (vb, ib): higher value first, then lower index; NaN below every number. */
function above(va: number, ia: number, vb: number, ib: number): boolean {
  if (va !== va) return vb !== vb && ia < ib;
  if (vb !== vb) return true;
  return va > vb || (va === vb && ia < ib);
}

/**
 * The `top` highest of `count` values (`at(i)`), highest first, as [value, index] columns. One pass
 * with a heap of `top` entries whose root ranks lowest, then the heap emptied from the back: no
 * object per element and no sort of the whole row. It was an [value, index] array per element and a
 * full sort on the main thread: classification 1 of a 4M-element output took 7.7 s of CPU there
 * (16M, within --http-max-input-size, took the server down for tens of seconds).
 */
function topOf(at: (i: number) => number, count: number, top: number): { values: Float64Array; indices: Int32Array } {
  const hv = new Float64Array(top);
  const hi = new Int32Array(top);
  let size = 0;
  // Sift the entry at `k` down / up so every parent ranks below its children.
  const down = (k: number): void => {
    for (;;) {
      const l = 2 * k + 1;
      if (l >= size) return;
      const r = l + 1;
      const c = r < size && above(hv[l]!, hi[l]!, hv[r]!, hi[r]!) ? r : l;
      if (!above(hv[k]!, hi[k]!, hv[c]!, hi[c]!)) return;
      [hv[k], hv[c]] = [hv[c]!, hv[k]!];
      [hi[k], hi[c]] = [hi[c]!, hi[k]!];
      k = c;
    }
  };
  for (let i = 0; i < count; i++) {
    const v = at(i);
    if (size < top) {
      let k = size++;
      hv[k] = v;
      hi[k] = i;
      while (k > 0) {
        const p = (k - 1) >> 1;
        if (!above(hv[p]!, hi[p]!, hv[k]!, hi[k]!)) break;
        [hv[k], hv[p]] = [hv[p]!, hv[k]!];
        [hi[k], hi[p]] = [hi[p]!, hi[k]!];
        k = p;
      }
    } else if (top > 0 && above(v, i, hv[0]!, hi[0]!)) {
      hv[0] = v;
      hi[0] = i;
      down(0);
    }
  }
  const values = new Float64Array(size);
  const indices = new Int32Array(size);
  // The root ranks lowest: taking it repeatedly fills the result from its end.
  for (let n = size - 1; n >= 0; n--) {
    values[n] = hv[0]!;
    indices[n] = hi[0]!;
    size--;
    hv[0] = hv[size]!;
    hi[0] = hi[size]!;
    down(0);
  }
  return { values, indices };
}

function classify(t: Tensor, k: number, batched: boolean): Tensor {
  if (t.datatype === 'BYTES') throw new InferError('INVALID_ARG', `class result not available for output due to unsupported type 'BYTES'`);
  const view = typedView(t) as ArrayLike<number | bigint>;
  const rows = batched ? (t.shape[0] ?? 1) : 1;
  const per = rows > 0 ? view.length / rows : 0;
  const top = Math.min(k, per);
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const from = r * per;
    const { values, indices } = topOf((i) => Number(view[from + i]!), per, top);
    for (let j = 0; j < values.length; j++) out.push(`${values[j]!.toFixed(6)}:${indices[j]}`);
  }
  return { name: t.name, datatype: 'BYTES', shape: batched ? [rows, top] : [top], data: encodeBytesElements(out) };
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
