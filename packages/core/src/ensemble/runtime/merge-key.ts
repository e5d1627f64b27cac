/**
 * Which ensemble requests a pipeline batch may merge. The merged request carries ONE set of
 * parameters, one priority and one timeout through every step, so requests merge only when they
 * agree on all three: each request then keeps its own semantics (a model sees its own parameters,
 * a step's queue applies its own priority and timeout), as in Triton's batcher where requests stay
 * separate. Requests that differ in any of them head pipeline batches of their own.
 */
import type { InferRequest, ParameterValue } from '../../types.ts';

function encode(value: ParameterValue): string {
  // Typed, so 1, 1n, '1' and true never collide; strings quoted, so no delimiter can be forged.
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  return `${typeof value === 'boolean' ? 'b' : 'd'}${String(value)}`;
}

/** The part of a pipeline batcher's key that per-request semantics add ('' for the plain case). */
export function requestSemanticsKey(request: InferRequest): string {
  const priority = request.priority ?? 0;
  const timeout = request.timeoutUs ?? 0;
  const params = request.parameters;
  const keys = params ? Object.keys(params) : [];
  if (priority === 0 && timeout === 0 && keys.length === 0) return '';
  let key = `|p${priority}|t${timeout}`;
  for (const k of keys.sort()) key += `|${JSON.stringify(k)}=${encode(params![k]!)}`;
  return key;
}
