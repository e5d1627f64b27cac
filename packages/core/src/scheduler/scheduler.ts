import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';

/** Triton's scheduler contract: enqueue, count, stop. Direct, dynamic batcher and ensembles implement it. */
export interface Scheduler {
  /** Resolves with this request's response; rejects with InferError (UNAVAILABLE after stop()). */
  enqueue(request: InferRequest): Promise<InferResponse>;
  /** Decoupled / streaming form: responses go to the sink, then `complete`. */
  enqueueStream?(request: InferRequest, sink: ResponseSink): void;
  /** Requests accepted and not yet answered (queued + executing). */
  readonly inflight: number;
  /** Refuse new work; resolve once in-flight work has drained. */
  stop(): Promise<void>;
}

/** Time source, injectable so batcher tests run deterministically. Times in microseconds. */
export interface Clock {
  nowUs(): number;
  setTimer(delayUs: number, fn: () => void): { cancel(): void };
}

/** The longest delay setTimeout honours. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  nowUs: () => Math.round(performance.now() * 1000),
  setTimer(delayUs, fn) {
    // setTimeout fires at once for a delay past 2^31-1 ms (~24.8 days), so a client's `timeout` of
    // 2^53 us expired its request on arrival: longer delays are waited out in steps.
    let remaining = Math.max(0, Math.ceil(delayUs / 1000));
    let t: ReturnType<typeof setTimeout>;
    const arm = (): void => {
      const step = Math.min(remaining, MAX_TIMEOUT_MS);
      remaining -= step;
      t = setTimeout(remaining > 0 ? arm : fn, step);
    };
    arm();
    return { cancel: () => clearTimeout(t) };
  },
};
