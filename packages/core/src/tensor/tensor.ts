import { InferError } from '../errors.ts';
import { DATA_TYPE_SIZE, type DataType, type DataTypeMap, type TypedArray } from './data-type.ts';
import { TYPED_ARRAY_CONSTRUCTORS, type TypedArrayConstructor } from './generated/data-types.ts';
import { encodeBytesElements } from './bytes-elements.ts';

// The datatype → typed array table is generated with the other datatype tables (data-type.ts).
export { TYPED_ARRAY_CONSTRUCTORS, type TypedArrayConstructor } from './generated/data-types.ts';

/**
 * A tensor as it travels through Tritium: plain data, structured-cloneable, its buffer transferable.
 * `data` is row-major little-endian; BYTES elements are each a u32 LE length followed by the bytes
 * (the KServe binary layout), so a tensor from the wire is used as it arrived.
 */
export interface Tensor {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Byte size a fixed-size tensor of this shape must have; undefined for BYTES. */
export function expectedByteSize(datatype: DataType, shape: readonly number[]): number | undefined {
  const size = DATA_TYPE_SIZE[datatype];
  return size === 0 ? undefined : size * elementCount(shape);
}

/**
 * A typed view over the tensor's bytes: no copy when the bytes are aligned for the element size,
 * one copy otherwise (e.g. a slice of an HTTP body at an odd offset).
 */
export function typedView<T extends DataType>(tensor: Tensor & { datatype: T }): DataTypeMap[T];
export function typedView(tensor: Tensor): TypedArray;
export function typedView(tensor: Tensor): TypedArray {
  const size = DATA_TYPE_SIZE[tensor.datatype] || 1;
  const { data } = tensor;
  if (data.byteLength % size !== 0) {
    throw new InferError(
      'INVALID_ARG',
      `tensor '${tensor.name}' holds ${data.byteLength} bytes, not a multiple of ${size} for ${tensor.datatype}`,
    );
  }
  const Ctor = TYPED_ARRAY_CONSTRUCTORS[tensor.datatype] as TypedArrayConstructor<TypedArray>;
  if (data.byteOffset % size === 0) return new Ctor(data.buffer, data.byteOffset, data.byteLength / size);
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  return new Ctor(copy.buffer, 0, data.byteLength / size);
}

/** The bytes behind a typed array, without copying. */
export function bytesOf(array: TypedArray): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/** Builds a fixed-size tensor from a typed array (no copy). */
export function tensorFromTyped(name: string, datatype: DataType, shape: readonly number[], values: TypedArray): Tensor {
  return { name, datatype, shape: [...shape], data: bytesOf(values) };
}

export function tensorFromStrings(name: string, shape: readonly number[], values: readonly (string | Uint8Array)[]): Tensor {
  return { name, datatype: 'BYTES', shape: [...shape], data: encodeBytesElements(values) };
}
