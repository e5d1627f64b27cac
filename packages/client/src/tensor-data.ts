/**
 * Datatype helpers the client needs on its own (it imports no internal package): element sizes,
 * BYTES serialisation (u32 LE length + bytes per element) and typed views.
 */

export type Datatype =
  | 'BOOL'
  | 'UINT8'
  | 'UINT16'
  | 'UINT32'
  | 'UINT64'
  | 'INT8'
  | 'INT16'
  | 'INT32'
  | 'INT64'
  | 'FP16'
  | 'FP32'
  | 'FP64'
  | 'BF16'
  | 'BYTES';

export type TypedArrayFor = {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BF16: Uint16Array;
  BYTES: Uint8Array;
};

export type AnyTypedArray = TypedArrayFor[Datatype];

/** Bytes per element; 0 for BYTES (variable, length-prefixed). */
export const ELEMENT_SIZE: Readonly<Record<Datatype, number>> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BF16: 2,
  BYTES: 0,
};

/** A typed array class: `new C(length)` or a view `new C(buffer, byteOffset, length)`. */
export interface TypedArrayClass<T> {
  new (length: number): T;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
}

/**
 * The typed array class each datatype is held in (FP16/BF16 as raw Uint16 bits, BOOL and BYTES as
 * Uint8). The same table as core's TYPED_ARRAY_CONSTRUCTORS, kept here because the client imports
 * no internal package; a server test checks the two agree.
 */
export const TYPED_ARRAYS: { readonly [K in Datatype]: TypedArrayClass<TypedArrayFor[K]> } = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
  BF16: Uint16Array,
  BYTES: Uint8Array,
};

/** Views `bytes` as the datatype's typed array (copies only when misaligned). */
export function viewAs<T extends Datatype>(datatype: T, bytes: Uint8Array): TypedArrayFor[T] {
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
