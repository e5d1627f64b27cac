import { closedLoop, summarize, type LatencySummary } from '@tritium/perf';

export interface Point {
  readonly concurrency: number;
  /** Requests (sentences) per second. */
  readonly throughput: number;
  readonly latency: LatencySummary;
  readonly errors: number;
}

/**
 * Closed loop at `concurrency` for `warmupMs` (discarded) then `measureMs`: throughput is
 * completions / window, latencies are per request. The same loop drives every configuration.
 */
export async function measure(concurrency: number, send: () => Promise<void>, warmupMs: number, measureMs: number): Promise<Point> {
  const load = closedLoop(concurrency, send);
  try {
    await new Promise((r) => setTimeout(r, warmupMs));
    load.drain();
    const start = performance.now();
    await new Promise((r) => setTimeout(r, measureMs));
    const done = load.drain();
    const elapsed = performance.now() - start;
    if (load.error) throw load.error;
    return {
      concurrency,
      throughput: done.length / (elapsed / 1000),
      latency: summarize(done.map((c) => (c.endMs - c.startMs) * 1000)),
      errors: 0,
    };
  } finally {
    await load.stop();
  }
}
