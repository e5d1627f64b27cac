/**
 * Per-request checks before a request joins a batch, with Triton's messages: unknown or missing
 * inputs, datatype, shape against the config, byte size, batch size, and the request's shape
 * against the instance's optimization profile (tensorrt_backend: "request specifies invalid shape
 * for input ... Error details: model expected the shape of dimension ..."). A failing request gets
 * its own InferError; the rest of the batch still runs.
 */
import { InferError, expectedByteSize, type InferRequest, type Tensor } from '@tritium/core';
import { shapeToString } from './engine-io.ts';
import type { TensorPlan, TrtInstanceInit } from './plan.ts';

function shapeMatches(expected: readonly number[], actual: readonly number[]): boolean {
  return expected.length === actual.length && expected.every((d, i) => d === -1 || d === actual[i]);
}

/** The engine shape an input is run with: its own shape, with the config's reshape applied. */
export function engineShape(init: TrtInstanceInit, plan: TensorPlan, shape: readonly number[], rows: number): number[] {
  const inner = plan.reshape ?? shape.slice(init.maxBatchSize > 0 ? 1 : 0);
  return init.maxBatchSize > 0 ? [rows, ...inner] : [...inner];
}

/** tensorrt_backend `ValidateDimension` against the profile; the message Triton returns for a request. */
export function profileError(init: TrtInstanceInit, instanceName: string, plan: TensorPlan, shape: readonly number[]): InferError | undefined {
  const { min, max } = plan;
  if (!min || !max) return undefined;
  let detail: string | undefined;
  if (shape.length !== max.length) {
    detail = `model expected ${max.length} dimensions but received ${shape.length} dimensions`;
  } else {
    const i = shape.findIndex((d, k) => d < min[k]! || d > max[k]!);
    if (i >= 0) detail = `model expected the shape of dimension ${i} to be between ${min[i]} and ${max[i]} but received ${shape[i]}`;
  }
  return detail === undefined
    ? undefined
    : new InferError('INVALID_ARG', `request specifies invalid shape for input '${plan.name}' for ${instanceName}. Error details: ${detail}`);
}

/** Throws the first problem of `request`; returns its rows (dim 0, or 1 for a non-batching model). */
export function checkRequest(init: TrtInstanceInit, instanceName: string, request: InferRequest): number {
  const model = init.modelName;
  const planned = new Map(init.inputs.map((p) => [p.name, p]));
  const given = new Map<string, Tensor>();
  for (const t of request.inputs) {
    if (!planned.has(t.name)) throw new InferError('INVALID_ARG', `unexpected inference input '${t.name}' for model '${model}'`);
    given.set(t.name, t);
  }
  const missing = init.inputs.filter((p) => !given.has(p.name)).map((p) => `'${p.name}'`);
  if (missing.length > 0) {
    throw new InferError(
      'INVALID_ARG',
      `expected ${init.inputs.length} inputs but got ${request.inputs.length} inputs for model '${model}'. Got input(s) [${[...given.keys()].map((n) => `'${n}'`).join(', ')}], but missing required input(s) [${missing.join(', ')}]. Please provide all required input(s).`,
    );
  }
  let rows: number | undefined;
  for (const t of request.inputs) {
    const plan = planned.get(t.name)!;
    if (t.datatype !== plan.datatype) {
      throw new InferError('INVALID_ARG', `inference input '${t.name}' data-type is '${t.datatype}', but model '${model}' expects '${plan.datatype}'`);
    }
    const expected = init.maxBatchSize > 0 ? [-1, ...plan.dims] : plan.dims;
    if (!shapeMatches(expected, t.shape)) {
      throw new InferError('INVALID_ARG', `unexpected shape for input '${t.name}' for model '${model}'. Expected ${shapeToString(expected)}, got ${shapeToString(t.shape)}`);
    }
    const bytes = expectedByteSize(t.datatype, t.shape);
    if (bytes !== undefined && bytes !== t.data.byteLength) {
      throw new InferError('INVALID_ARG', `input byte size mismatch for input '${t.name}' for model '${model}'. Expected ${bytes}, got ${t.data.byteLength}`);
    }
    if (init.maxBatchSize > 0) {
      const d = t.shape[0]!;
      if (rows !== undefined && d !== rows) throw new InferError('INVALID_ARG', `input '${t.name}' batch size does not match other inputs for '${model}'`);
      rows = d;
    }
  }
  if (init.maxBatchSize > 0 && (rows ?? 1) > init.maxBatchSize) {
    throw new InferError('INVALID_ARG', `inference request batch-size must be <= ${init.maxBatchSize} for '${model}'`);
  }
  const n = init.maxBatchSize > 0 ? (rows ?? 1) : 1;
  for (const t of request.inputs) {
    const plan = planned.get(t.name)!;
    const error = profileError(init, instanceName, plan, engineShape(init, plan, t.shape, n));
    if (error) throw error;
  }
  const outputs = new Set(init.outputs.map((o) => o.name));
  for (const o of request.outputs ?? []) {
    if (!outputs.has(o.name)) throw new InferError('INVALID_ARG', `unexpected inference output '${o.name}' for model '${model}'`);
  }
  return n;
}

/** Key grouping requests that can share one run: same non-batch shapes of every input. */
export function batchKey(request: InferRequest): string {
  return request.inputs
    .map((t) => `${t.name}:${t.shape.slice(1).join('x')}`)
    .sort()
    .join('|');
}
