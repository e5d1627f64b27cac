/**
 * The response cache's key for one request. Triton hashes the model name, version and every input
 * (name and bytes; its docs say name, shape, datatype and data) into a 64-bit value and accepts the
 * collision risk. Tritium takes a SHA-256 over all of these, and over what else decides the answer
 * here: the version's content stamp (a version reloaded from changed files never answers from the
 * old files' cache), the requested output names (a request for fewer outputs gets fewer) and the
 * request's parameters (a `model.ts` may read them). Inputs are taken in name order, so the order a
 * client lists them in does not matter.
 */
import { createHash } from 'node:crypto';
import type { InferRequest, ParameterValue } from '../types.ts';

/** Each field is length-prefixed, so no two different requests write the same byte stream. */
function field(hash: ReturnType<typeof createHash>, value: string | Uint8Array): void {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  const len = Buffer.allocUnsafe(8);
  len.writeBigUInt64LE(BigInt(bytes.byteLength));
  hash.update(len);
  hash.update(bytes);
}

const paramText = (v: ParameterValue): string => `${typeof v}:${String(v)}`;

/** `namespace`: the model's with `--model-namespacing` (same-named models of two repositories never share answers). */
export function responseCacheKey(request: InferRequest, version: number, stamp: string, namespace = ''): string {
  const hash = createHash('sha256');
  // Without namespacing the key is what it always was, so a shared cache keeps its entries.
  if (namespace !== '') field(hash, `namespace:${namespace}`);
  field(hash, request.model);
  field(hash, String(version));
  field(hash, stamp);
  const inputs = [...request.inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  field(hash, String(inputs.length));
  for (const t of inputs) {
    field(hash, t.name);
    field(hash, t.datatype);
    field(hash, t.shape.join(','));
    field(hash, t.data);
  }
  const outputs = (request.outputs ?? []).map((o) => o.name).sort();
  field(hash, outputs.join('\u0000'));
  const params = Object.entries(request.parameters ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  field(hash, String(params.length));
  for (const [k, v] of params) {
    field(hash, k);
    field(hash, paramText(v));
  }
  return hash.digest('base64');
}
