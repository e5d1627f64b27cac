/**
 * ONNX element types (TensorProto.DataType numbers) ↔ Triton config types and onnxruntime-node's
 * tensor type strings. TYPE_INVALID marks an ONNX type Triton cannot serve (e.g. complex).
 */
import type { DataType } from '@tritium/core';
import type { ConfigDataType } from '@tritium/core/tensor';

const ONNX_TO_CONFIG: Readonly<Record<number, ConfigDataType>> = {
  1: 'TYPE_FP32',
  2: 'TYPE_UINT8',
  3: 'TYPE_INT8',
  4: 'TYPE_UINT16',
  5: 'TYPE_INT16',
  6: 'TYPE_INT32',
  7: 'TYPE_INT64',
  8: 'TYPE_STRING',
  9: 'TYPE_BOOL',
  10: 'TYPE_FP16',
  11: 'TYPE_FP64',
  12: 'TYPE_UINT32',
  13: 'TYPE_UINT64',
  16: 'TYPE_BF16',
};

/** onnxruntime's element type names (Triton's OnnxDataTypeName), for messages. */
const ONNX_NAMES: Readonly<Record<number, string>> = {
  1: 'FLOAT',
  2: 'UINT8',
  3: 'INT8',
  4: 'UINT16',
  5: 'INT16',
  6: 'INT32',
  7: 'INT64',
  8: 'STRING',
  9: 'BOOL',
  10: 'FLOAT16',
  11: 'DOUBLE',
  12: 'UINT32',
  13: 'UINT64',
  16: 'BFLOAT16',
};

export function onnxTypeName(onnxType: number): string {
  return ONNX_NAMES[onnxType] ?? 'UNDEFINED';
}

/** ONNX element type number → `TYPE_*` (Triton's OnnxDataTypeToModelConfigDataType). */
export function onnxToConfigType(onnxType: number): ConfigDataType {
  return ONNX_TO_CONFIG[onnxType] ?? 'TYPE_INVALID';
}

/** onnxruntime-node tensor type for a wire datatype; undefined where Node has none (BF16). */
export const ORT_TYPE: Readonly<Record<DataType, string | undefined>> = {
  BOOL: 'bool',
  UINT8: 'uint8',
  UINT16: 'uint16',
  UINT32: 'uint32',
  UINT64: 'uint64',
  INT8: 'int8',
  INT16: 'int16',
  INT32: 'int32',
  INT64: 'int64',
  FP16: 'float16',
  FP32: 'float32',
  FP64: 'float64',
  BYTES: 'string',
  BF16: undefined,
};

const FROM_ORT: Readonly<Record<string, DataType>> = Object.fromEntries(
  Object.entries(ORT_TYPE)
    .filter(([, ort]) => ort !== undefined)
    .map(([wire, ort]) => [ort, wire as DataType]),
);

/** onnxruntime-node tensor type → wire datatype. */
export function fromOrtType(type: string): DataType | undefined {
  return FROM_ORT[type];
}
