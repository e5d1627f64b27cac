/**
 * `@tritium/core/tensor`: the datatype tables (wire and config names, element sizes, typed-array
 * constructors), sizes of a shape, the BYTES wire format (4-byte little-endian length, then the
 * bytes, per element), and the pad values of padding-aware batching.
 */
export { DATA_TYPE_SIZE, CONFIG_DATA_TYPES, configToWireDataType, wireToConfigDataType } from './data-type.ts';
export type { ConfigDataType } from './data-type.ts';
export { TYPED_ARRAY_CONSTRUCTORS, elementCount, expectedByteSize } from './tensor.ts';
export type { TypedArrayConstructor } from './tensor.ts';
export { readU32LE, countBytesElements, BytesWriter, encodeBytesElements, decodeBytesElements } from './bytes-elements.ts';
export { encodePadValue } from './pad.ts';
