/**
 * Wire datatypes (KServe v2 strings) and their config enum names (`TYPE_*`), from Triton's
 * DataTypeToProtocolString. Config says TYPE_STRING where the wire says BYTES.
 */
export type DataType =
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
  | 'BYTES'
  | 'BF16';

/** Config enum `inference.DataType` names, with their proto numbers. */
export const CONFIG_DATA_TYPES = {
  TYPE_INVALID: 0,
  TYPE_BOOL: 1,
  TYPE_UINT8: 2,
  TYPE_UINT16: 3,
  TYPE_UINT32: 4,
  TYPE_UINT64: 5,
  TYPE_INT8: 6,
  TYPE_INT16: 7,
  TYPE_INT32: 8,
  TYPE_INT64: 9,
  TYPE_FP16: 10,
  TYPE_FP32: 11,
  TYPE_FP64: 12,
  TYPE_STRING: 13,
  TYPE_BF16: 14,
} as const;
export type ConfigDataType = keyof typeof CONFIG_DATA_TYPES;

const CONFIG_TO_WIRE: Readonly<Record<ConfigDataType, DataType | undefined>> = {
  TYPE_INVALID: undefined,
  TYPE_BOOL: 'BOOL',
  TYPE_UINT8: 'UINT8',
  TYPE_UINT16: 'UINT16',
  TYPE_UINT32: 'UINT32',
  TYPE_UINT64: 'UINT64',
  TYPE_INT8: 'INT8',
  TYPE_INT16: 'INT16',
  TYPE_INT32: 'INT32',
  TYPE_INT64: 'INT64',
  TYPE_FP16: 'FP16',
  TYPE_FP32: 'FP32',
  TYPE_FP64: 'FP64',
  TYPE_STRING: 'BYTES',
  TYPE_BF16: 'BF16',
};

/** Bytes per element; 0 for BYTES (variable, length-prefixed). */
export const DATA_TYPE_SIZE: Readonly<Record<DataType, number>> = {
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
  BYTES: 0,
  BF16: 2,
};

export const DATA_TYPES = Object.keys(DATA_TYPE_SIZE) as readonly DataType[];

export function isDataType(value: string): value is DataType {
  return Object.prototype.hasOwnProperty.call(DATA_TYPE_SIZE, value);
}

/** `TYPE_FP32` → `FP32`, `TYPE_STRING` → `BYTES`; undefined for TYPE_INVALID or unknown names. */
export function configToWireDataType(configType: string): DataType | undefined {
  return CONFIG_TO_WIRE[configType as ConfigDataType];
}

/** `FP32` → `TYPE_FP32`, `BYTES` → `TYPE_STRING`. */
export function wireToConfigDataType(datatype: DataType): ConfigDataType {
  return datatype === 'BYTES' ? 'TYPE_STRING' : (`TYPE_${datatype}` as ConfigDataType);
}

/** The typed array each datatype is viewed as (FP16/BF16 as raw Uint16 bits, BOOL as Uint8). */
export interface DataTypeMap {
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
}
export type TypedArray = DataTypeMap[DataType];
