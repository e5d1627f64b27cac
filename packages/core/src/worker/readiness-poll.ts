/**
 * Inside the worker: asks the instance's `isReady()` every `intervalMs` and reports each change of
 * its answer. One question at a time: an answer that takes longer than `timeoutMs` reports the
 * instance not ready at once, and the next question waits for that answer. A false, anything but
 * `true`, or a throw is not ready, with the reason.
 */
import type { ReadinessPolicy } from './types.ts';

export type ReadinessReport = (ready: boolean, reason?: string) => void;

function describe(answer: unknown): string {
  return typeof answer === 'boolean' ? `isReady() returned ${answer}` : `isReady() returned a ${answer === null ? 'null' : typeof answer}, not a boolean`;
}

export function pollReadiness(isReady: () => unknown, policy: ReadinessPolicy, report: ReadinessReport): void {
  let last = 'ready';
  const tell = (ready: boolean, reason?: string): void => {
    const now = ready ? 'ready' : (reason ?? 'not ready');
    if (now === last) return;
    last = now;
    report(ready, reason);
  };
  const ask = (): void => {
    let answered = false;
    const late = setTimeout(() => answered || tell(false, `isReady() did not answer within ${policy.timeoutMs} ms`), policy.timeoutMs);
    late.unref();
    Promise.resolve()
      .then(isReady)
      .then(
        (answer) => (answer === true ? tell(true) : tell(false, describe(answer))),
        (error: unknown) => tell(false, `isReady() threw: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`),
      )
      .finally(() => {
        answered = true;
        clearTimeout(late);
        setTimeout(ask, policy.intervalMs).unref();
      });
  };
  setTimeout(ask, policy.intervalMs).unref();
}
