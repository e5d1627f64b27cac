import { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { StatsRecorder } from './stats-recorder.ts';

/**
 * Wraps a StatsRecorder so a throwing hook is logged instead of propagating: statistics must never
 * keep a request from its answer or leave the scheduler's bookkeeping half done.
 */
export function guardedStats(stats: StatsRecorder, log: Logger, model: string): StatsRecorder {
  const guard =
    <A extends unknown[]>(name: string, fn: (...args: A) => void) =>
    (...args: A): void => {
      try {
        fn.apply(stats, args);
      } catch (err) {
        log.error(`model '${model}': statistics hook ${name} threw: ${InferError.from(err).message}`);
      }
    };
  return {
    requestQueued: guard('requestQueued', stats.requestQueued),
    requestDequeued: guard('requestDequeued', stats.requestDequeued),
    execution: guard('execution', stats.execution),
    requestSucceeded: guard('requestSucceeded', stats.requestSucceeded),
    requestFailed: guard('requestFailed', stats.requestFailed),
    ...(stats.response ? { response: guard('response', stats.response) } : {}),
    ...(stats.firstResponse ? { firstResponse: guard('firstResponse', stats.firstResponse) } : {}),
    ...(stats.crashRetried ? { crashRetried: guard('crashRetried', stats.crashRetried) } : {}),
    ...(stats.poisonIsolated ? { poisonIsolated: guard('poisonIsolated', stats.poisonIsolated) } : {}),
    ...(stats.tokens ? { tokens: guard('tokens', stats.tokens) } : {}),
  };
}
