/**
 * Triton's repeat backend, model side (repeat_backend `ModelState::ValidateModelConfig`):
 * max_batch_size 0, inputs IN (INT32 [n]), DELAY (UINT32, IN's shape), WAIT (UINT32 [1]), outputs
 * OUT (INT32 [1]) and IDX (UINT32 [1]), in that order, with its messages.
 */
import { shapeToString, type LoadSpec } from '@tritium/core/backend';
import { invalidArg } from '../config-read.ts';
import type { ExampleModelPlan } from '../example-backend.ts';

export interface RepeatInit {
  readonly model: string;
  readonly version: number;
}

const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

export function planRepeat(spec: Pick<LoadSpec, 'config' | 'version'>): ExampleModelPlan<RepeatInit> {
  const { config } = spec;
  if (config.max_batch_size !== 0) throw invalidArg('repeat backend only supports models with max_batch_size == 0');
  if (config.input.length !== 3) throw invalidArg(`expected 3 inputs, got ${config.input.length}`);
  if (config.output.length !== 2) throw invalidArg(`expected 2 outputs, got ${config.output.length}`);
  const [input, delay, wait] = config.input as [typeof config.input[0], typeof config.input[0], typeof config.input[0]];
  const [out, idx] = config.output as [typeof config.output[0], typeof config.output[0]];
  const names: [string, string, string][] = [
    [input.name, 'IN', 'first input'],
    [delay.name, 'DELAY', 'second input'],
    [wait.name, 'WAIT', 'third input'],
    [out.name, 'OUT', 'first output'],
    [idx.name, 'IDX', 'second output'],
  ];
  for (const [got, want, which] of names) {
    if (got !== want) throw invalidArg(`expected ${which} tensor name to be ${want}, got ${got}`);
  }
  if (input.dims.length !== 1) throw invalidArg(`expected IN shape to have one dimension, got ${shapeToString(input.dims)}`);
  if (!sameShape(input.dims, delay.dims)) {
    throw invalidArg(`expected IN and DELAY shape to match, got ${shapeToString(input.dims)} and ${shapeToString(delay.dims)}`);
  }
  for (const [t, n] of [
    [wait, 'WAIT'],
    [out, 'OUT'],
    [idx, 'IDX'],
  ] as const) {
    if (t.dims.length !== 1 || t.dims[0] !== 1) throw invalidArg(`expected ${n} shape to be [1], got ${shapeToString(t.dims)}`);
  }
  for (const [t, n, type] of [
    [input, 'IN', 'INT32'],
    [delay, 'DELAY', 'UINT32'],
    [wait, 'WAIT', 'UINT32'],
    [out, 'OUT', 'INT32'],
    [idx, 'IDX', 'UINT32'],
  ] as const) {
    if (t.data_type !== `TYPE_${type}`) throw invalidArg(`expected ${n} datatype to be ${type}, got ${t.data_type}`);
  }
  return { init: { model: config.name, version: spec.version } };
}
