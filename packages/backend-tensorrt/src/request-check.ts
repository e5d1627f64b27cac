/**
 * Per-request checks before a request joins a batch: core's request rules, then the request's shape
 * against the instance's optimization profile (tensorrt_backend: "request specifies invalid shape
 * for input ... Error details: model expected the shape of dimension ..."). A failing request gets
 * its own InferError; the rest of the batch still runs.
 */
import { InferError, type InferRequest } from '@tritium/core';
import { requestTag, validateRequest, type RequestSpec } from '@tritium/core/backend';
import type { TensorPlan, TrtInstanceInit } from './plan.ts';

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

/**
 * Throws the first problem of `request`; returns its rows (dim 0, or 1 for a non-batching model).
 * Core's `validateRequest` (the server's rules and messages) first, then what only an engine
 * adds: every engine input bound (an `optional` config input cannot be left out of a TensorRT
 * run) and each shape inside the instance's optimization profile.
 */
export function checkRequest(init: TrtInstanceInit, spec: RequestSpec, instanceName: string, request: InferRequest): number {
  const n = validateRequest(spec, request);
  for (const plan of init.inputs) {
    if (!request.inputs.some((t) => t.name === plan.name)) {
      throw new InferError(
        'INVALID_ARG',
        `${requestTag(request)}input '${plan.name}' is optional for model '${init.modelName}', but its TensorRT engine needs every input bound; send it`,
      );
    }
  }
  for (const t of request.inputs) {
    const plan = init.inputs.find((p) => p.name === t.name)!;
    const error = profileError(init, instanceName, plan, engineShape(init, plan, t.shape, n));
    if (error) throw error;
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
