/**
 * Datatype helpers the client needs on its own (it imports no internal package): element sizes,
 * BYTES serialisation (u32 LE length + bytes per element) and typed views.
 */

import { ELEMENT_SIZE, TYPED_ARRAYS, type Datatype, type TypedArrayFor } from './generated/data-types.ts';

// The datatype tables are generated from model_config.proto's DataType enum (tools/codegen), from the
// same rows as core's: the client imports no internal package, so it gets its own copy.
export { ELEMENT_SIZE, TYPED_ARRAYS } from './generated/data-types.ts';
export type { Datatype, TypedArrayClass, TypedArrayFor } from './generated/data-types.ts';

export type AnyTypedArray = TypedArrayFor[Datatype];

/**
 * Views `bytes` as the datatype's typed array (copies only when misaligned). The datatype may come from
 * a server's answer: only the table's own rows are datatypes (`constructor` is refused).
 */
export function viewAs<T extends Datatype>(datatype: T, bytes: Uint8Array): TypedArrayFor[T] {
  if (!Object.hasOwn(TYPED_ARRAYS, datatype)) throw new Error(`unknown datatype '${String(datatype)}'`);
  const size = ELEMENT_SIZE[datatype] || 1;
  if (bytes.byteLength % size !== 0) throw new Error(`${bytes.byteLength} bytes is not a whole number of ${datatype} elements`);
  let b = bytes;
  if (b.byteOffset % size !== 0) b = new Uint8Array(b);
  return new TYPED_ARRAYS[datatype](b.buffer, b.byteOffset, b.byteLength / size);
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

export function serializeBytes(elements: readonly (string | Uint8Array)[]): Uint8Array {
  const encoded = elements.map((e) => (typeof e === 'string' ? utf8.encode(e) : e));
  const out = new Uint8Array(encoded.reduce((n, e) => n + 4 + e.byteLength, 0));
  const view = new DataView(out.buffer);
  let o = 0;
  for (const e of encoded) {
    view.setUint32(o, e.byteLength, true);
    out.set(e, o + 4);
    o += 4 + e.byteLength;
  }
  return out;
}

export function deserializeBytes(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let o = 0;
  while (o < data.byteLength) {
    if (o + 4 > data.byteLength) throw new Error('malformed BYTES tensor: truncated length prefix');
    const len = view.getUint32(o, true);
    if (o + 4 + len > data.byteLength) throw new Error('malformed BYTES tensor: element runs past the end');
    out.push(data.subarray(o + 4, o + 4 + len));
    o += 4 + len;
  }
  return out;
}

export function decodeUtf8(b: Uint8Array): string {
  return utf8Decoder.decode(b);
}

export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}
