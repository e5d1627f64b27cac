/**
 * TensorRT's data types (nvinfer1::DataType numbering, as the shim reports them) and their Triton
 * config names (tensorrt_backend `ConvertTrtTypeToConfigDataType`). FP8 and INT4 have no Triton
 * type: such tensors cannot be served.
 */
import type { ModelInput } from '@tritium/core';

/** A config data type name (`TYPE_FP32`, ...). */
export type ConfigType = ModelInput['data_type'];

const TRT_TO_CONFIG: Readonly<Record<number, ConfigType>> = {
  0: 'TYPE_FP32', // kFLOAT
  1: 'TYPE_FP16', // kHALF
  2: 'TYPE_INT8', // kINT8
  3: 'TYPE_INT32', // kINT32
  4: 'TYPE_BOOL', // kBOOL
  5: 'TYPE_UINT8', // kUINT8
  7: 'TYPE_BF16', // kBF16
  8: 'TYPE_INT64', // kINT64
};

const TRT_NAMES: Readonly<Record<number, string>> = { 6: 'kFP8', 9: 'kINT4', 10: 'kFP4', 11: 'kE8M0' };

/** The config type of a TensorRT type, or TYPE_INVALID when Triton has none. */
export function trtToConfigType(trtType: number): ConfigType {
  return TRT_TO_CONFIG[trtType] ?? 'TYPE_INVALID';
}

/** A readable name for a TensorRT type without a config type (for messages). */
export function trtTypeName(trtType: number): string {
  return TRT_TO_CONFIG[trtType] ?? TRT_NAMES[trtType] ?? `nvinfer1::DataType(${trtType})`;
}
