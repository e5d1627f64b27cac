/**
 * Errors that mean the instance itself failed (its worker crashed, ran out of memory or overran its
 * execute timeout), not that the batch held a bad request. The batcher does not bisect a batch that
 * failed this way: running its halves again would only crash (or hang) the instance again, once per
 * half, and spend its restart budget until it gives up. The mark survives prefixes (an ensemble's
 * `in ensemble 'E', ` keeps the original as its cause).
 */
import type { InferError } from '../errors.ts';

const failures = new WeakSet<object>();

/** Marks `error` as an instance failure and returns it. */
export function instanceFailure(error: InferError): InferError {
  failures.add(error);
  return error;
}

/** True when `error`, or an error it wraps (its cause chain), is an instance failure. */
export function isInstanceFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 16; e = (e as { cause?: unknown }).cause, depth++) {
    if (failures.has(e)) return true;
  }
  return false;
}
