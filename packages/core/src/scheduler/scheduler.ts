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

export const systemClock: Clock = {
  nowUs: () => Math.round(performance.now() * 1000),
  setTimer(delayUs, fn) {
    const t = setTimeout(fn, Math.max(0, Math.ceil(delayUs / 1000)));
    return { cancel: () => clearTimeout(t) };
  },
};
