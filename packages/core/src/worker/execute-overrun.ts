/**
 * The worker host's watch on a long execute: one still running after `executeWarnMs` is logged
 * (model, instance, elapsed) and counted; when it ends, the log says how long it took. A hung
 * execute is never silent, whether or not an execute timeout will kill it.
 */
import type { Logger } from '../logger.ts';

/** `executeWarnMs` when not given (Tritium's `tritium.execute_warn_ms` default). */
export const DEFAULT_EXECUTE_WARN_MS = 30_000;

export interface OverrunWatchOptions {
  readonly label: string;
  readonly log: Logger;
  readonly executeWarnMs: number | undefined;
  readonly executeTimeoutMs: number | undefined;
  /** Called once when an execute overruns (the instance counts it in `executeOverruns`). */
  readonly onOverrun: () => void;
}

/** Starts watching one execute of `requests` requests; `done()` when it ends. */
export function overrunWatch(o: OverrunWatchOptions, requests: number): { done(): void } {
  const warnMs = o.executeWarnMs ?? DEFAULT_EXECUTE_WARN_MS;
  if (!(warnMs > 0)) return { done() {} };
  const started = performance.now();
  let overran = false;
  const timer = setTimeout(() => {
    overran = true;
    o.onOverrun();
    o.log.warn(
      `${o.label}: execute of ${requests} request(s) still running after ${Math.round(performance.now() - started)} ms ` +
        `(warn threshold ${warnMs} ms${o.executeTimeoutMs ? `, killed at ${o.executeTimeoutMs} ms` : '; no execute timeout set'})`,
    );
  }, warnMs);
  timer.unref();
  return {
    done: () => {
      clearTimeout(timer);
      if (overran) o.log.warn(`${o.label}: execute that overran ended after ${Math.round(performance.now() - started)} ms`);
    },
  };
}
