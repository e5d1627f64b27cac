import { type InferRequest } from '@tritium/core';
import { concatInputs } from '@tritium/core/backend';
import { TritonError, toTritonError } from './errors.ts';
import type { InferenceRequest } from './request.ts';
import { Tensor } from './tensor.ts';

function asCore(requests: readonly InferenceRequest[], name: string): InferRequest[] {
  return requests.map((r, i) => {
    const t = r.inputs().find((x) => x.name === name);
    if (!t) throw new TritonError(`stackInputs: request ${i} ('${r.requestId()}') has no input '${name}'`, TritonError.INVALID_ARG);
    return { id: r.requestId(), model: '', inputs: [t.toWire()] };
  });
}

/**
 * The batch-first helper: input `name` of every request concatenated along dim 0 into one tensor
 * (BYTES too), so the model runs once on the whole batch. Pair it with {@link batchSizes} to know
 * which rows belong to which request, or return ONE `InferenceResponse` whose outputs have the same
 * number of rows: the backend splits it back per request.
 *
 * ```ts
 * const text = stackInputs(requests, 'TEXT').strings();   // every request's strings, in order
 * ```
 */
export function stackInputs(requests: readonly InferenceRequest[], name: string): Tensor {
  if (requests.length === 0) throw new TritonError(`stackInputs: no requests to stack '${name}' from`, TritonError.INVALID_ARG);
  try {
    return Tensor.fromWire(concatInputs(asCore(requests, name), name));
  } catch (error) {
    throw toTritonError(error, 'INVALID_ARG');
  }
}

/** Rows (dim 0) each request contributes to {@link stackInputs}' result for input `name`. */
export function batchSizes(requests: readonly InferenceRequest[], name: string): number[] {
  return asCore(requests, name).map((r) => r.inputs[0]!.shape[0] ?? 1);
}
