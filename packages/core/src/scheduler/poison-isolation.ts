/**
 * Poison isolation (Tritium's, not Triton's): a batch whose execute rejected as a whole (e.g. a
 * model that throws on one bad input) is not failed as a whole. Its halves run again, one after the
 * other on the same instance, until every failure is pinned on the requests that fail alone; each
 * of those gets the error of its own execution, and its neighbours get their results. When the
 * first half passes, the second holds the cause (failures are taken as deterministic) and is split
 * without being run whole. A batch of n requests with k poisoned costs at most 2·k·⌈log2 n⌉ extra
 * executions. Errors that say nothing about the data (UNAVAILABLE, NOT_FOUND, UNSUPPORTED,
 * ALREADY_EXISTS, CANCELLED) fail the whole batch at once. Instance failures (a crashed or timed-out
 * worker, see instance-failure.ts) are not bisected: a crash and a restart per half would cost far
 * more than an execution; the batcher re-runs such a batch's requests alone instead (crash-retry.ts),
 * and one that reaches this function fails the batch at once.
 */
import { isInstanceFailure } from '../backend/instance-failure.ts';
import type { InferError } from '../errors.ts';

const BISECTABLE: ReadonlySet<string> = new Set(['INTERNAL', 'INVALID_ARG', 'UNKNOWN']);

/** What the isolation needs of its scheduler. */
export interface IsolationOps<E> {
  /** False once the entry has been answered (e.g. cancelled meanwhile). */
  pending(entry: E): boolean;
  /** Executes the pending ones of `entries` as one batch, answering each; resolves with the error when it failed as a whole. */
  run(entries: readonly E[]): Promise<InferError | undefined>;
  /** Answers the entries with `error`. */
  fail(entries: readonly E[], error: InferError): void;
  /** True when nobody waits for the batch any more (every request cancelled). */
  abandoned(): boolean;
}

/**
 * `entries` failed together with `error`. `tested`: `error` came from running exactly these entries
 * (false: they are only known to hold a cause, and one left alone is run to get its own error).
 */
export async function isolatePoison<E>(entries: readonly E[], error: InferError, ops: IsolationOps<E>, tested = true): Promise<void> {
  const live = entries.filter((e) => ops.pending(e));
  if (live.length === 0) return;
  if (live.length === 1 && !tested) {
    const own = await ops.run(live);
    if (own) ops.fail(live, own);
    return;
  }
  if (live.length === 1 || !BISECTABLE.has(error.code) || isInstanceFailure(error) || ops.abandoned()) {
    ops.fail(live, error);
    return;
  }
  const mid = Math.ceil(live.length / 2);
  const first = live.slice(0, mid);
  const second = live.slice(mid);
  const firstError = await ops.run(first);
  if (firstError) await isolatePoison(first, firstError, ops);
  if (!firstError && second.length > 1) {
    await isolatePoison(second, error, ops, false);
    return;
  }
  const secondError = await ops.run(second);
  if (secondError) await isolatePoison(second, secondError, ops);
}
