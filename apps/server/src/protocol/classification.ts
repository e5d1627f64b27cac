/**
 * Triton's classification extension, applied by the transports: an output requested with
 * parameter `classification: k` comes back as BYTES `[batch, k]` (or `[k]` without batching) of
 * `"<value>:<index>"`, highest values first (value printed as C++ std::to_string does: 6 decimals).
 * Labels (`label_filename`) are not read by Tritium yet.
 */
import { encodeBytesElements, InferError, typedView, type InferResponse, type RequestedOutput, type Tensor } from '@tritium/core';

function classify(t: Tensor, k: number, batched: boolean): Tensor {
  if (t.datatype === 'BYTES') throw new InferError('INVALID_ARG', `class result not available for output due to unsupported type 'BYTES'`);
  const values = Array.from(typedView(t) as ArrayLike<number | bigint>, Number);
  const rows = batched ? (t.shape[0] ?? 1) : 1;
  const per = rows > 0 ? values.length / rows : 0;
  const top = Math.min(k, per);
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const row = values.slice(r * per, (r + 1) * per).map((v, i) => [v, i] as const);
    row.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    for (const [v, i] of row.slice(0, top)) out.push(`${v.toFixed(6)}:${i}`);
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
