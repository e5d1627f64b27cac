/**
 * Wire datatypes (KServe v2 strings) and their config enum names (`TYPE_*`), from Triton's
 * DataTypeToProtocolString. Config says TYPE_STRING where the wire says BYTES. The tables are
 * generated from model_config.proto's DataType enum (tools/codegen, `npm run generate`), the same
 * rows the client's tables are generated from.
 */
import { CONFIG_TO_WIRE, DATA_TYPE_SIZE, type ConfigDataType, type DataType, type DataTypeMap } from './generated/data-types.ts';

export { CONFIG_DATA_TYPES, DATA_TYPE_SIZE } from './generated/data-types.ts';
export type { ConfigDataType, DataType, DataTypeMap } from './generated/data-types.ts';

export const DATA_TYPES = Object.keys(DATA_TYPE_SIZE) as readonly DataType[];

export function isDataType(value: string): value is DataType {
  return Object.prototype.hasOwnProperty.call(DATA_TYPE_SIZE, value);
}

/**
 * `TYPE_FP32` → `FP32`, `TYPE_STRING` → `BYTES`; undefined for TYPE_INVALID or unknown names. Only the
 * table's own rows answer: `constructor` or `__proto__` (from a config or a request) are unknown names.
 */
export function configToWireDataType(configType: string): DataType | undefined {
  return Object.hasOwn(CONFIG_TO_WIRE, configType) ? CONFIG_TO_WIRE[configType as ConfigDataType] : undefined;
}

/** `FP32` → `TYPE_FP32`, `BYTES` → `TYPE_STRING`. */
export function wireToConfigDataType(datatype: DataType): ConfigDataType {
  return datatype === 'BYTES' ? 'TYPE_STRING' : (`TYPE_${datatype}` as ConfigDataType);
}

export type TypedArray = DataTypeMap[DataType];
