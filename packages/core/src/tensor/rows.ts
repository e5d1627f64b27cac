/**
 * Row regrouping for length-aware batching: take chosen rows of a batch tensor (optionally cut to
 * a shorter dim 1), and put the rows of several such tensors back in their original order. Both
 * copy into a fresh ArrayBuffer (safe to transfer to a worker).
 */
import { InferError } from '../errors.ts';
import { DATA_TYPE_SIZE } from './data-type.ts';
import { BytesWriter, bytesElementOffsets } from './bytes-elements.ts';
import { elementCount, type Tensor } from './tensor.ts';

/**
 * The rows `rows` of `tensor` (dim 0), in that order; with `width`, dim 1 is cut to its first
 * `width` positions (rank ≥ 2, `width` ≤ dim 1). Rows may repeat; every index must be in range.
 */
export function takeRows(tensor: Tensor, rows: readonly number[], width?: number): Tensor {
  const shape = tensor.shape;
  if (shape.length === 0) throw new InferError('INTERNAL', `tensor '${tensor.name}' has no rows to take`);
  const cut = width !== undefined && shape.length >= 2 && width < shape[1]!;
  if (width !== undefined && (shape.length < 2 || width > shape[1]!)) {
    throw new InferError('INTERNAL', `cannot cut dim 1 of '${tensor.name}' [${shape.join(',')}] to ${width}`);
  }
  const rowElements = elementCount(shape.slice(1));
  const keptElements = cut ? width * elementCount(shape.slice(2)) : rowElements;
  const outShape = cut ? [rows.length, width, ...shape.slice(2)] : [rows.length, ...shape.slice(1)];
  for (const r of rows) {
    if (!Number.isInteger(r) || r < 0 || r >= shape[0]!) throw new InferError('INTERNAL', `row ${r} out of range for '${tensor.name}' [${shape.join(',')}]`);
  }
  const size = DATA_TYPE_SIZE[tensor.datatype];
  if (size === 0) {
    const at = bytesElementOffsets(tensor.data, tensor.name);
    const out = new BytesWriter(tensor.data.byteLength);
    for (const r of rows) {
      const first = r * rowElements;
      out.addRaw(tensor.data, at[first]!, at[first + keptElements]!);
    }
    return { name: tensor.name, datatype: 'BYTES', shape: outShape, data: out.finish() };
  }
  const rowBytes = rowElements * size;
  const keptBytes = keptElements * size;
  const data = new Uint8Array(new ArrayBuffer(rows.length * keptBytes));
  rows.forEach((r, i) => data.set(tensor.data.subarray(r * rowBytes, r * rowBytes + keptBytes), i * keptBytes));
  return { name: tensor.name, datatype: tensor.datatype, shape: outShape, data };
}

/**
 * One tensor of `total` rows from `parts`, where part `k` holds rows `rows[k]` (original indices,
 * in the part's order). Parts must agree in datatype and rank; when their dim 1 differs (per-token
 * outputs of groups of different lengths), each row is padded at the end of dim 1 with zero bytes
 * (an empty string for BYTES) to the longest. Every row 0..total-1 must be given exactly once.
 */
export function putRowsBack(parts: readonly Tensor[], rows: readonly (readonly number[])[], total: number): Tensor {
  const first = parts[0];
  if (!first || parts.length !== rows.length) throw new InferError('INTERNAL', 'putRowsBack: one row list per part is needed');
  const rank = first.shape.length;
  const tail = [...first.shape.slice(1)];
  for (const p of parts) {
    if (p.datatype !== first.datatype || p.shape.length !== rank) {
      throw new InferError('INTERNAL', `output '${first.name}' differs in datatype or rank between length groups`);
    }
    for (let d = 1; d < rank; d++) {
      if (d >= 2 && p.shape[d] !== first.shape[d]) throw new InferError('INTERNAL', `output '${first.name}' differs beyond dim 1 between length groups`);
      tail[d - 1] = Math.max(tail[d - 1]!, p.shape[d]!);
    }
  }
  const where = new Int32Array(total * 2).fill(-1); // row → (part, index in part)
  rows.forEach((list, k) => {
    if (list.length !== parts[k]!.shape[0]) throw new InferError('INTERNAL', `output '${first.name}': group ${k} returned ${parts[k]!.shape[0]} rows for ${list.length}`);
    list.forEach((r, i) => {
      if (r < 0 || r >= total || where[r * 2]! >= 0) throw new InferError('INTERNAL', `putRowsBack: row ${r} given twice or out of range`);
      where[r * 2] = k;
      where[r * 2 + 1] = i;
    });
  });
  if (where.some((v) => v < 0)) throw new InferError('INTERNAL', `output '${first.name}': some rows were not returned by any length group`);
  const shape = [total, ...tail];
  const inner = elementCount(tail.slice(1)); // elements per position of dim 1
  const size = DATA_TYPE_SIZE[first.datatype];
  if (size === 0) {
    const offsets = parts.map((p) => bytesElementOffsets(p.data, p.name));
    const out = new BytesWriter(parts.reduce((n, p) => n + p.data.byteLength, 0) + total * elementCount(tail) * 4);
    const empty = new Uint8Array(4);
    for (let r = 0; r < total; r++) {
      const k = where[r * 2]!;
      const i = where[r * 2 + 1]!;
      const part = parts[k]!;
      const own = rank >= 2 ? part.shape[1]! * inner : 1;
      const first = i * own;
      out.addRaw(part.data, offsets[k]![first]!, offsets[k]![first + own]!);
      const missing = (rank >= 2 ? tail[0]! * inner : 1) - own;
      for (let m = 0; m < missing; m++) out.addRaw(empty, 0, 4);
    }
    return { name: first.name, datatype: 'BYTES', shape, data: out.finish() };
  }
  const rowBytes = elementCount(tail) * size;
  const data = new Uint8Array(new ArrayBuffer(total * rowBytes));
  for (let r = 0; r < total; r++) {
    const part = parts[where[r * 2]!]!;
    const ownBytes = (part.shape.length >= 2 ? part.shape[1]! * inner : 1) * size;
    const i = where[r * 2 + 1]!;
    data.set(part.data.subarray(i * ownBytes, (i + 1) * ownBytes), r * rowBytes);
  }
  return { name: first.name, datatype: first.datatype, shape, data };
}
