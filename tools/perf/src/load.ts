/**
 * Load generators. Closed loop (`--concurrency-range`): N requests always outstanding. Open loop
 * (`--request-rate-range`): requests leave on a constant or Poisson schedule regardless of
 * responses; how late they leave is recorded, so a client that cannot keep up shows.
 */

/** One completed request. */
export interface Completion {
  readonly startMs: number;
  /** When its last response arrived (a streamed request: its last response with outputs). */
  readonly endMs: number;
  /** Open loop: how late the request left against its schedule. */
  readonly lagMs: number;
  /** Responses it got: 1, or what a decoupled model sent on the stream. */
  readonly responses: number;
}

/**
 * What a streamed request (`--streaming`) resolves with, at its final flag: how many responses
 * carried outputs and when the last of them arrived. As perf_analyzer, a request's latency runs to
 * its last response, not to a final flag sent on its own, and a request that got no response at all
 * (only the empty final) is left out of the measurement.
 */
export interface StreamOutcome {
  readonly responses: number;
  readonly lastResponseMs: number;
}

export type Send = () => Promise<void | StreamOutcome>;

/** The completion of a request sent at `startMs`, or undefined when it got no response to measure. */
function completion(startMs: number, lagMs: number, outcome: void | StreamOutcome): Completion | undefined {
  if (!outcome) return { startMs, endMs: performance.now(), lagMs, responses: 1 };
  if (outcome.responses === 0) return undefined;
  return { startMs, endMs: outcome.lastResponseMs, lagMs, responses: outcome.responses };
}

/** A running load; `drain()` takes the completions recorded since the last drain. */
export interface Load {
  drain(): Completion[];
  /** The first error a request hit (the run stops on it, as perf_analyzer does). */
  readonly error: unknown;
  stop(): Promise<void>;
}

/** Most requests an open loop keeps outstanding before it waits (bounds memory). */
const MAX_OUTSTANDING = 100_000;

export function closedLoop(concurrency: number, send: Send): Load {
  let stopped = false;
  let error: unknown;
  let buffer: Completion[] = [];
  const worker = async () => {
    while (!stopped) {
      const startMs = performance.now();
      let outcome: void | StreamOutcome;
      try {
        outcome = await send();
      } catch (e) {
        error ??= e;
        stopped = true;
        return;
      }
      const done = completion(startMs, 0, outcome);
      if (done) buffer.push(done);
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  return {
    drain: () => {
      const out = buffer;
      buffer = [];
      return out;
    },
    get error() {
      return error;
    },
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

export function openLoop(ratePerSec: number, distribution: 'constant' | 'poisson', send: Send, random: () => number = Math.random): Load {
  let stopped = false;
  let error: unknown;
  let buffer: Completion[] = [];
  const inflight = new Set<Promise<void>>();
  const gapMs = () => (distribution === 'poisson' ? -Math.log(1 - random()) : 1) * (1000 / ratePerSec);
  let due = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = () => {
    if (stopped) return;
    const now = performance.now();
    // Send everything that is due (a late timer sends a burst, and the lag records it).
    while (due <= now && inflight.size < MAX_OUTSTANDING) {
      const lagMs = now - due;
      const startMs = now;
      const p: Promise<void> = send()
        .then(
          (outcome) => {
            const done = completion(startMs, lagMs, outcome);
            if (done) buffer.push(done);
          },
          (e: unknown) => {
            error ??= e;
            stopped = true;
          },
        )
        .finally(() => inflight.delete(p));
      inflight.add(p);
      due += gapMs();
    }
    timer = setTimeout(fire, Math.max(0, due - performance.now()));
  };
  fire();
  return {
    drain: () => {
      const out = buffer;
      buffer = [];
      return out;
    },
    get error() {
      return error;
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled([...inflight]);
    },
  };
}
