/**
 * Which ensemble requests a pipeline batch may merge. The merged request carries ONE set of
 * parameters, one priority, one timeout and one sequence through every step, so requests merge only
 * when they agree on all of them: each request then keeps its own semantics (a model sees its own parameters,
 * a step's queue applies its own priority and timeout), as in Triton's batcher where requests stay
 * separate. Requests that differ in any of them head pipeline batches of their own. BLS calls
 * made by different executions (different callers) do not merge either: the merged request would
 * make every step wait on all of their callers at once.
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
  const callers = request.callers ?? [];
  const seq = request.sequence;
  if (priority === 0 && timeout === 0 && keys.length === 0 && callers.length === 0 && !seq) return '';
  let key = `|p${priority}|t${timeout}`;
  // A merged request carries one sequence: only requests of the same sequence, same flags, merge.
  if (seq) key += `|s${encode(seq.id)}${seq.start ? '+' : ''}${seq.end ? '.' : ''}`;
  for (const k of keys.sort()) key += `|${JSON.stringify(k)}=${encode(params![k]!)}`;
  // BLS calls from different executions stay apart: a merged request waits on all its callers.
  if (callers.length > 0) key += `|c${callers.map((f) => f.id).join(',')}`;
  return key;
}
