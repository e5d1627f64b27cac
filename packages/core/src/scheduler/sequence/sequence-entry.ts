/**
 * What the sequence batcher keeps: a request of a sequence (Entry), where it waits (a Slot of an
 * instance, or the Backlog of sequences waiting for a slot), an instance (Runner) and a batch row.
 */
import type { ExecuteContext, ModelInstance } from '../../backend/spi.ts';
import type { CorrelationId, InferRequest } from '../../types.ts';
import type { AnsweredRequest } from '../batch-answers.ts';
import type { Candidate } from '../batch-formation.ts';
import type { EarliestTimer } from '../earliest-timer.ts';
import type { Execution } from '../execution.ts';
import type { RequestQueue } from '../request-queue.ts';
import type { SequenceStateValues } from './implicit-state.ts';

/** Placed in a slot's queue by the idle reaper: release the slot once what is before it ran. */
export const RELEASE = Symbol('release idle sequence');

export interface Entry extends Candidate, AnsweredRequest {
  /** The sequence's key (correlationKey of `id`). */
  readonly corr: string;
  readonly id: CorrelationId;
  readonly start: boolean;
  readonly end: boolean;
  /** Never `retry`: a request of a crashed batch is not re-run (sequence-batcher.ts). */
  state: 'queued' | 'running' | 'done';
  /** Where it waits while queued in a slot or the backlog (for cancellation). */
  where?: Slot | Backlog;
  /** Oldest: the slot that offered it to its instance (and waits for it before offering the next). */
  slot?: Slot;
  /** The request sent to the model (controls and state inputs added), once prepared. */
  row?: InferRequest;
  /** The state values this request reads and writes (its sequence's). */
  values?: SequenceStateValues;
  running?: Execution<Entry>;
}

/** A sequence waiting for a slot, with its requests so far. */
export interface Backlog {
  readonly corr: string;
  readonly queue: Entry[];
  /** When the earliest `timeout` of its requests ends its wait (µs). */
  expiresAt: number;
  timer?: { cancel(): void };
}

/** One batch row of an instance; a sequence holds it from START to END. */
export interface Slot {
  readonly runner: Runner;
  readonly index: number;
  readonly queue: (Entry | typeof RELEASE)[];
  /** The sequence holding the slot; undefined while free. */
  corr: string | undefined;
  /** That sequence's implicit state. */
  values: SequenceStateValues | undefined;
  /** Oldest: the request of this slot offered to its instance or executing. */
  inFlight: Entry | undefined;
}

/** An instance and its slots. */
export interface Runner {
  readonly index: number;
  readonly instance: ModelInstance;
  readonly slots: Slot[];
  readonly context: ExecuteContext;
  busy: boolean;
  /** Forming a batch now (a slot released meanwhile must not start a second formation). */
  pumping: boolean;
  repump: boolean;
  /** Highest slot index that may hold work (direct batches span 0..maxActive). */
  maxActive: number;
  /** Oldest: the slots' offered requests, in arrival order. */
  readonly offered: RequestQueue<Entry>;
  /** Ends a batch delay. */
  readonly timer: EarliestTimer;
}

/** A row of a batch: a request's, or a filler row (no entry; its result is discarded). */
export interface Row {
  readonly request: InferRequest;
  readonly entry?: Entry;
}
