/**
 * Ends `tritium serve`'s process with an exit code, whatever still runs in it. Node's
 * `process.exit()` terminates every worker thread and then waits for each to end: a thread stuck in
 * native code (an ONNX Runtime run of a model that never finishes, under thread isolation) never
 * ends, so the process logged that its exit timeout expired and stayed alive, holding its ports,
 * until SIGKILL. Here the worker host's threads are terminated first; when one does not end within
 * the grace, the process kills itself (SIGKILL: exit status 137) after saying why.
 */
import { type Logger } from '@tritium/core';
import { terminateWorkerThreads } from '@tritium/core/worker';

/** How long terminated worker threads get to end before the process kills itself. */
export const THREAD_EXIT_GRACE_MS = 1_000;

export async function exitProcess(code: number, log: Logger): Promise<never> {
  const stuck = await terminateWorkerThreads(THREAD_EXIT_GRACE_MS);
  if (stuck > 0) {
    log.error(
      `${stuck} worker thread(s) stuck in native code did not end within ${THREAD_EXIT_GRACE_MS} ms of being terminated; ` +
        `killing the process (SIGKILL) instead of exiting with code ${code}`,
    );
    process.kill(process.pid, 'SIGKILL');
  }
  process.exit(code);
}
