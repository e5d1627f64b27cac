/**
 * Hooks a scheduler calls so the server can keep Triton's ModelStatistics and Prometheus counters.
 * Schedulers own the timing (they know queue/execute boundaries); the server owns aggregation.
 * All durations in nanoseconds. Failure reasons are Triton's metric labels.
 */
import type { TokenCount } from '../types.ts';

export type FailureReason = 'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER';

/**
 * How one response of a request that reached the model ended (Triton's per-response statistics):
 * `success` a response with outputs, `fail` an error in its place, `empty` a request that ended
 * with no response at all (decoupled), `cancel` cancelled while the model worked on it.
 */
export type ResponseOutcome = 'success' | 'fail' | 'empty' | 'cancel';

export interface SuccessDurations {
  readonly queueNs: number;
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
  readonly batchSize?: number;
}

export interface StatsRecorder {
  /** A request entered the queue (pending count +1). */
  requestQueued(): void;
  /** A request left the queue for an execution (pending count −1), after `queueNs` in the queue. */
  requestDequeued(queueNs: number): void;
  /** One model execution of `batchSize` inferences (sum of the requests' batch dims). */
  execution(batchSize: number, timings: { computeInputNs: number; computeInferNs: number; computeOutputNs: number }): void;
  /**
   * A request finished successfully; `totalNs` from arrival to response, with the compute of the
   * execution that carried it. `batchSize` (the request's own, when the scheduler knows it) is what
   * an ensemble counts as its one "execution" per request, as Triton does.
   */
  requestSucceeded(totalNs: number, durations: SuccessDurations): void;
  /** A request failed (rejected in queue, cancelled, backend error, other). If it never left the queue, `dequeued` is false. */
  requestFailed(totalNs: number, reason: FailureReason, dequeued: boolean): void;
  /**
   * Response `index` (0 for the first response of its request) of a request the model worked on:
   * `inferNs` computing it (since the execution started, or since the previous response), `outputNs`
   * extracting its outputs. Optional: recorders that keep no per-response statistics omit it.
   */
  response?(index: number, outcome: ResponseOutcome, durations: { inferNs: number; outputNs: number }): void;
  /** The first response of a request was sent, `sinceArrivalNs` after it arrived (Triton's first-response histogram). Optional. */
  firstResponse?(sinceArrivalNs: number): void;
  /** A request is re-run alone because its instance crashed running its batch (crash-retry.ts). Optional. */
  crashRetried?(): void;
  /** A request crashed its instance running alone: it fails alone as the crash's cause (crash-retry.ts). Optional. */
  poisonIsolated?(): void;
  /** One execution (or a pipeline's length group) of rows whose own lengths sum to `real` tokens, padded to `padded`. Optional. */
  tokens?(count: TokenCount): void;
}

export const nullStatsRecorder: StatsRecorder = {
  requestQueued() {},
  requestDequeued() {},
  execution() {},
  requestSucceeded() {},
  requestFailed() {},
};
