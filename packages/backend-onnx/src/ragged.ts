/**
 * Ragged batching (Triton's `allow_ragged_batch` + `batch_input`): ragged inputs of a batch are
 * concatenated element-wise into one 1-D tensor, and batch inputs describe how the elements split
 * between batch items (one item per request row).
 */
import { InferError, tensorFromTyped, type InferRequest, type Tensor } from '@tritium/core';
import { DATA_TYPE_SIZE, countBytesElements, elementCount } from '@tritium/core/tensor';
import type { BatchInputPlan } from './plan.ts';

function input(request: InferRequest, name: string): Tensor {
  const t = request.inputs.find((i) => i.name === name);
  if (!t) throw new InferError('INVALID_ARG', `expected input '${name}' in request '${request.id}' for '${request.model}'`);
  return t;
}

function elements(tensor: Tensor): number {
  return DATA_TYPE_SIZE[tensor.datatype] === 0 ? countBytesElements(tensor.data, tensor.name) : elementCount(tensor.shape);
}

/** Input `name` of every request as one 1-D tensor of all their elements (fresh buffer). */
export function concatRagged(batch: readonly InferRequest[], name: string): Tensor {
  const parts = batch.map((r) => input(r, name));
  const data = new Uint8Array(parts.reduce((n, t) => n + t.data.byteLength, 0));
  let offset = 0;
  for (const t of parts) {
    data.set(t.data, offset);
    offset += t.data.byteLength;
  }
  return { name, datatype: parts[0]!.datatype, shape: [parts.reduce((n, t) => n + elements(t), 0)], data };
}

/** Builds one batch input for the formed batch (`rows[i]` = batch items of request i). */
export function computeBatchInput(plan: BatchInputPlan, batch: readonly InferRequest[], rows: readonly number[], model: string): Tensor {
  // Per batch item: its element count and its shape without the batch dim.
  const counts: number[] = [];
  const shapes: number[][] = [];
  batch.forEach((request, i) => {
    const source = input(request, plan.source);
    const perItem = elements(source) / Math.max(1, rows[i]!);
    for (let k = 0; k < rows[i]!; k++) {
      counts.push(perItem);
      shapes.push(source.shape.slice(1));
    }
  });
  let values: number[];
  let shape: number[];
  switch (plan.kind) {
    case 'BATCH_ELEMENT_COUNT':
      values = counts;
      shape = [counts.length];
      break;
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT':
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO': {
      let total = 0;
      values = counts.map((c) => (total += c));
      if (plan.kind === 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO') values.unshift(0);
      shape = [values.length];
      break;
    }
    case 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE': {
      // Only the shape carries information.
      const max = Math.max(0, ...counts);
      values = new Array<number>(max).fill(0);
      shape = [max];
      break;
    }
    case 'BATCH_ITEM_SHAPE':
    case 'BATCH_ITEM_SHAPE_FLATTEN': {
      const rank = shapes[0]?.length ?? 0;
      values = shapes.flat();
      shape = plan.kind === 'BATCH_ITEM_SHAPE' ? [shapes.length, rank] : [values.length];
      break;
    }
    default:
      throw new InferError('UNSUPPORTED', `model '${model}': batch input kind '${plan.kind}' is not supported`);
  }
  return plan.datatype === 'FP32'
    ? tensorFromTyped(plan.target, 'FP32', shape, Float32Array.from(values))
    : tensorFromTyped(plan.target, 'INT32', shape, Int32Array.from(values));
}
