/**
 * Element types by their Triton wire names (the names the rest of Tritium uses), mapped to ONNX's
 * TensorProto.DataType numbers.
 */
import type { DataType } from '@tritium/core';

/** Core's wire datatypes: a datatype added there fails to compile here until ONNX's number is given. */
export type ElementType = DataType;

export const ONNX_ELEMENT_TYPE: Readonly<Record<ElementType, number>> = {
  FP32: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  BYTES: 8,
  BOOL: 9,
  FP16: 10,
  FP64: 11,
  UINT32: 12,
  UINT64: 13,
  BF16: 16,
};

/** Every element type onnxruntime-node can feed and fetch (BF16 has no JS tensor type there). */
export const ORT_NODE_ELEMENT_TYPES: readonly ElementType[] = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
];
