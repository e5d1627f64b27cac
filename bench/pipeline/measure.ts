import { closedLoop, summarize, type LatencySummary } from '@tritium/perf';

export interface Point {
  readonly concurrency: number;
  /** Requests (sentences) per second. */
  readonly throughput: number;
  readonly latency: LatencySummary;
  readonly errors: number;
}

/** One measured window: what completed, over how long, and each request's latency. */
export interface Window {
  readonly completions: number;
  readonly elapsedMs: number;
  readonly latenciesUs: number[];
}

/** The longest a warm-up or a measured part is stretched to reach its completions. */
export const MAX_WINDOW_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Closed loop at `concurrency` for `warmupMs` (discarded) then `measureMs`: completions and
 * per-request latencies of the measured part. Each part also lasts until `concurrency` requests
 * completed in it (at most MAX_WINDOW_MS): a configuration whose round trip is longer than the
 * window (the seed's pipeline padding 256 mixed-length texts to the longest) is measured over whole
 * round trips instead of reading 0 req/s. `around.start` / `around.end` run right at the measured
 * part's edges (while the load keeps running), so counters read there cover exactly the window.
 */
export async function measureWindow(
  concurrency: number,
  send: () => Promise<void>,
  warmupMs: number,
  measureMs: number,
  around: { start(): Promise<void>; end(): Promise<void> },
): Promise<Window> {
  const load = closedLoop(concurrency, send);
  // Waits `ms`, then until `concurrency` completions are in (or the load failed); returns them.
  const collect = async (ms: number, since: number): Promise<ReturnType<typeof load.drain>> => {
    await sleep(ms);
    const done = load.drain();
    while (done.length < concurrency && !load.error && performance.now() - since < MAX_WINDOW_MS) {
      await sleep(50);
      done.push(...load.drain());
    }
    return done;
  };
  try {
    await collect(warmupMs, performance.now());
    await around.start();
    load.drain();
    const start = performance.now();
    const done = await collect(measureMs, start);
    const elapsedMs = performance.now() - start;
    await around.end();
    if (load.error) throw load.error;
    return { completions: done.length, elapsedMs, latenciesUs: done.map((c) => (c.endMs - c.startMs) * 1000) };
  } finally {
    await load.stop();
  }
}

/** Several windows of one configuration at one concurrency, as one point. */
export function pointOf(concurrency: number, windows: readonly Window[]): Point {
  const completions = windows.reduce((n, w) => n + w.completions, 0);
  const elapsedMs = windows.reduce((n, w) => n + w.elapsedMs, 0);
  return {
    concurrency,
    throughput: elapsedMs > 0 ? completions / (elapsedMs / 1000) : 0,
    latency: summarize(windows.flatMap((w) => w.latenciesUs)),
    errors: 0,
  };
}

/**
 * The order configurations take in round `round`: rotated by one each round, so none is always
 * measured first (right after another's load) or last.
 */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  const n = items.length;
  return items.map((_, i) => items[(i + round) % n]!);
}
