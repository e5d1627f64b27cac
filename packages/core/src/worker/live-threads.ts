/**
 * The worker threads the worker host started and that have not exited yet. A thread running native
 * code (an ONNX Runtime `run()` that never returns) cannot be terminated: V8 can interrupt only
 * JavaScript. Node's `process.exit()` terminates and then joins every worker thread, so one such
 * thread keeps the process alive forever, holding its ports. `terminateWorkerThreads` tells the
 * caller, before it exits, whether that would happen.
 */
import type { Worker } from 'node:worker_threads';

const live = new Set<Worker>();

/** Counts `worker` as live until it exits. */
export function trackThread(worker: Worker): void {
  live.add(worker);
  worker.once('exit', () => live.delete(worker));
}

/**
 * Terminates every live worker thread the host started and waits up to `graceMs` for them to exit;
 * resolves with how many did not (threads stuck in native code: `process.exit()` would wait for them forever).
 */
export async function terminateWorkerThreads(graceMs: number): Promise<number> {
  const threads = [...live];
  if (threads.length === 0) return 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  await Promise.race([Promise.all(threads.map((t) => t.terminate().catch(() => undefined))), gaveUp]);
  clearTimeout(timer);
  return threads.filter((t) => live.has(t)).length;
}
