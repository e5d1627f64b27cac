/** Worker entry of the `addsub` test backend: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1 (INT32/FP32). */
import { InferError } from '../../errors.ts';
import { bytesOf, typedView, type Tensor } from '../../tensor/tensor.ts';
import type { CreateWorkerInstance } from '../../worker/types.ts';
import { findInput, perRequest, respond, type TestModelInit } from './common.ts';

function compute(a: Tensor, b: Tensor, op: 1 | -1, name: string): Tensor {
  if (a.datatype !== b.datatype || (a.datatype !== 'INT32' && a.datatype !== 'FP32')) {
    throw new InferError('INVALID_ARG', `addsub supports INT32 or FP32 inputs of one type, got ${a.datatype} and ${b.datatype}`);
  }
  if (a.shape.join(',') !== b.shape.join(',')) {
    throw new InferError('INVALID_ARG', `addsub inputs must have equal shapes, got [${a.shape.join(',')}] and [${b.shape.join(',')}]`);
  }
  const x = typedView(a) as Int32Array | Float32Array;
  const y = typedView(b) as Int32Array | Float32Array;
  const out = a.datatype === 'INT32' ? new Int32Array(x.length) : new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]! + op * y[i]!;
  return { name, datatype: a.datatype, shape: a.shape, data: bytesOf(out) };
}

export const createInstance: CreateWorkerInstance<TestModelInit> = async (init) => ({
  execute: (batch) =>
    perRequest(batch, (r) => {
      const a = findInput(r, init.inputs[0] ?? 'INPUT0');
      const b = findInput(r, init.inputs[1] ?? 'INPUT1');
      return respond(init, r, [compute(a, b, 1, init.outputs[0] ?? 'OUTPUT0'), compute(a, b, -1, init.outputs[1] ?? 'OUTPUT1')]);
    }),
});
