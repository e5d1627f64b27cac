/**
 * Tensor ⇄ onnxruntime-node Tensor. Numeric types share bytes with typed-array views (INT64 as
 * BigInt64Array, FP16 as raw Uint16 bits, BOOL as Uint8Array); BYTES become JS strings (ORT's
 * string tensors), which must be valid UTF-8.
 */
import * as ort from 'onnxruntime-node';
import { InferError, decodeStrings, typedView, type DataType, type Tensor } from '@tritium/core';
import { encodeBytesElements } from '@tritium/core/tensor';
import { ORT_TYPE, fromOrtType } from './onnx-types.ts';

/** Builds the ORT tensor for `tensor` with the shape the model sees. */
export function toOrtTensor(tensor: Tensor, shape: readonly number[], model: string): ort.Tensor {
  const type = ORT_TYPE[tensor.datatype];
  if (!type) {
    throw new InferError('INVALID_ARG', `input '${tensor.name}' of model '${model}': datatype ${tensor.datatype} is not supported by onnxruntime-node`);
  }
  if (tensor.datatype === 'BYTES') return new ort.Tensor('string', decodeStrings(tensor.data, tensor.name), [...shape]);
  return new ort.Tensor(type as 'float32', typedView(tensor) as Float32Array, [...shape]);
}

/** Copies an ORT output into a Tensor with `shape` (bytes in a fresh buffer the worker can transfer). */
export function fromOrtTensor(name: string, value: ort.Tensor, shape: readonly number[], model: string): Tensor {
  const datatype: DataType | undefined = fromOrtType(value.type);
  if (!datatype) {
    throw new InferError('INTERNAL', `output '${name}' of model '${model}' has type '${value.type}', which Tritium cannot return`);
  }
  const data = value.data as unknown;
  if (datatype === 'BYTES') {
    return { name, datatype, shape: [...shape], data: encodeBytesElements(data as string[]) };
  }
  const view = data as ArrayBufferView;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
  return { name, datatype, shape: [...shape], data: bytes };
}
