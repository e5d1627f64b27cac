/**
 * Batch/non-batch adaptation between ensemble steps, as Triton does: a tensor one rank short of
 * what a consumer expects gets a leading batch dim of 1; a batch-1 tensor one rank too many gets
 * it stripped. Anything else passes unchanged (the consumer reports real shape errors).
 */
import type { ModelConfig } from '../../config/model-config.ts';
import type { Tensor } from '../../tensor/tensor.ts';

/** `tensor` renamed to `name` and shaped for a consumer declaring `dims` (batching adds dim 0). */
export function adaptTensor(tensor: Tensor, name: string, dims: readonly number[] | undefined, batching: boolean): Tensor {
  let shape = tensor.shape;
  if (dims) {
    const expected = dims.length + (batching ? 1 : 0);
    if (shape.length === expected - 1) shape = [1, ...shape];
    else if (shape.length === expected + 1 && shape[0] === 1) shape = shape.slice(1);
  }
  if (shape === tensor.shape && name === tensor.name) return tensor;
  return { name, datatype: tensor.datatype, shape, data: tensor.data };
}

/** Declared dims of input (or output) `name` of `config`, if known. */
export function dimsOf(config: ModelConfig | undefined, name: string, kind: 'input' | 'output'): readonly number[] | undefined {
  const list = kind === 'input' ? config?.input : config?.output;
  return list?.find((t) => t.name === name)?.dims;
}
