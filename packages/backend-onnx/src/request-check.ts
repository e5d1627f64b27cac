/**
 * Per-request checks before a request joins a batch, with Triton's messages: unknown or missing
 * inputs, datatype, shape against the config (reshape aside), byte size, and batch size. A failing
 * request gets its own InferError; the rest of the batch still runs.
 */
import { InferError, expectedByteSize, type InferRequest, type Tensor } from '@tritium/core';
import { shapeToString } from './model-io.ts';
import type { OnnxInstanceInit } from './plan.ts';

function shapeMatches(expected: readonly number[], actual: readonly number[]): boolean {
  return expected.length === actual.length && expected.every((d, i) => d === -1 || d === actual[i]);
}

/** Throws the first problem of `request`; returns its rows (dim 0, or 1 for a non-batching model). */
export function checkRequest(init: OnnxInstanceInit, request: InferRequest): number {
  const model = init.modelName;
  const planned = new Map(init.inputs.map((p) => [p.name, p]));
  const given = new Map<string, Tensor>();
  for (const t of request.inputs) {
    if (!planned.has(t.name)) throw new InferError('INVALID_ARG', `unexpected inference input '${t.name}' for model '${model}'`);
    given.set(t.name, t);
  }
  const missing = init.inputs.filter((p) => !p.optional && !given.has(p.name)).map((p) => `'${p.name}'`);
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
    // A ragged input's sizes may differ between requests (and from the config): only the batch dim is checked.
    const ragged = plan.ragged && init.maxBatchSize > 0;
    if (ragged ? t.shape.length === 0 : !shapeMatches(expected, t.shape)) {
      throw new InferError(
        'INVALID_ARG',
        `unexpected shape for input '${t.name}' for model '${model}'. Expected ${shapeToString(expected)}, got ${shapeToString(t.shape)}`,
      );
    }
    const bytes = expectedByteSize(t.datatype, t.shape);
    if (bytes !== undefined && bytes !== t.data.byteLength) {
      throw new InferError(
        'INVALID_ARG',
        `input byte size mismatch for input '${t.name}' for model '${model}'. Expected ${bytes}, got ${t.data.byteLength}`,
      );
    }
    if (init.maxBatchSize > 0) {
      const d = t.shape[0]!;
      if (rows !== undefined && d !== rows) {
        throw new InferError('INVALID_ARG', `input '${t.name}' batch size does not match other inputs for '${model}'`);
      }
      rows = d;
    }
  }
  if (init.maxBatchSize > 0 && (rows ?? 1) > init.maxBatchSize) {
    throw new InferError('INVALID_ARG', `inference request batch-size must be <= ${init.maxBatchSize} for '${model}'`);
  }
  const outputs = new Set(init.outputs.map((o) => o.name));
  for (const o of request.outputs ?? []) {
    if (!outputs.has(o.name)) throw new InferError('INVALID_ARG', `unexpected inference output '${o.name}' for model '${model}'`);
  }
  return init.maxBatchSize > 0 ? (rows ?? 1) : 1;
}

/**
 * Key grouping requests that can share one run: same set of inputs with the same non-batch
 * shapes (dynamic axes such as a sequence length may differ between groups); ragged inputs may
 * differ within a group.
 */
export function batchKey(init: Pick<OnnxInstanceInit, 'inputs'>, request: InferRequest): string {
  const ragged = new Set(init.inputs.filter((p) => p.ragged).map((p) => p.name));
  return request.inputs
    .map((t) => (ragged.has(t.name) ? `${t.name}:ragged` : `${t.name}:${t.shape.slice(1).join('x')}`))
    .sort()
    .join('|');
}
