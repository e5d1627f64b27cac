/**
 * Grouping of checked requests into runs. The checks themselves are core's `validateRequest` (the
 * server's rules and Triton's messages), against `requestSpecOf` the instance's planned tensors.
 */
import type { InferRequest } from '@tritium/core';
import type { OnnxInstanceInit } from './plan.ts';

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
