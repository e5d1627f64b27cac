/**
 * Runs a formed batch of the dynamic batcher on its instance and answers each request: padded to
 * the batch's longest where inputs opted in (tensor/pad.ts), bisected when the execution fails as a
 * whole (poison-isolation.ts), its requests re-run alone when the instance crashed (crash-retry.ts),
 * through executeDecoupled for a decoupled model. Plain promise chaining on the unary path: it is
 * every execution's path.
 */
import { InferError } from '../errors.ts';
import type { ExecuteContext, ExecuteOutput } from '../backend/spi.ts';
import { isInstanceFailure } from '../backend/instance-failure.ts';
import { padBatch, unpadResponse } from '../tensor/pad.ts';
import { executionTokens } from './execution-tokens.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import type { BatchAnswers, AnsweredRequest, Timings } from './batch-answers.ts';
import type { Candidate } from './batch-formation.ts';
import type { BatcherOptions } from './batcher-options.ts';
import { executionContext } from './call-cycles.ts';
import type { CrashRetries } from './crash-retry.ts';
import { Execution } from './execution.ts';
import type { InstanceSlot } from './instance-slots.ts';
import { isolatePoison } from './poison-isolation.ts';
import type { Clock } from './scheduler.ts';

/** A request the dynamic batcher accepted. */
export interface DynamicEntry extends Candidate, AnsweredRequest {
  readonly timeoutAction: 'REJECT' | 'DELAY';
  /** Its queue policy's timeout (µs from arrival; 0: none). Bounds a crash retry too. */
  readonly timeoutUs: number;
  /** The crash this request is re-run after (its one retry is spent). */
  crash: InferError | undefined;
  /** The execution it is part of. */
  batch?: Execution<DynamicEntry>;
}

export interface BatchRunnerDeps {
  readonly options: BatcherOptions;
  readonly clock: Clock;
  readonly decoupled: boolean;
  readonly answers: BatchAnswers<DynamicEntry>;
  /** Where the requests of a crashed batch wait to be re-run alone. */
  readonly retries: CrashRetries<DynamicEntry>;
  /** Forms the next batch (an instance freed, or requests wait to be re-run). */
  readonly pump: () => void;
}

export class BatchRunner {
  private readonly opts: BatcherOptions;
  private readonly clock: Clock;
  private readonly decoupled: boolean;
  private readonly answers: BatchAnswers<DynamicEntry>;
  private readonly retries: CrashRetries<DynamicEntry>;

  constructor(private readonly deps: BatchRunnerDeps) {
    this.opts = deps.options;
    this.clock = deps.clock;
    this.decoupled = deps.decoupled;
    this.answers = deps.answers;
    this.retries = deps.retries;
  }

  /**
   * Runs `entries` (taken off the queue, or a crash retry) as one batch on `slot`, which is busy
   * until the batch is answered; then the batcher forms its next batch.
   */
  run(slot: InstanceSlot, entries: DynamicEntry[], now: number): void {
    // Decoupled: a request may be answered while its execution still runs; then its signal must not stop it.
    const running = new Execution(entries, !this.decoupled);
    const signal = running.signal;
    for (const e of entries) {
      // A request re-run after a crash left the queue already (its queue time stays the first one).
      const fromQueue = e.state === 'queued';
      e.state = 'running';
      e.batch = running;
      e.timer?.cancel();
      e.timer = undefined;
      if (fromQueue) this.answers.dequeued(e, now);
    }
    slot.busy = true;
    const done = (): void => {
      slot.busy = false;
      this.deps.pump();
    };
    if (this.decoupled) {
      let requests: InferRequest[];
      try {
        requests = this.padded(entries);
      } catch (err) {
        this.answers.failAll(entries, InferError.from(err, 'INVALID_ARG'), 'OTHER');
        done();
        return;
      }
      const batchSize = entries.reduce((n, e) => n + e.batchSize, 0);
      const run = { signal, context: this.contextOf(slot, entries), startUs: now, batchSize };
      this.answers
        .runDecoupled(slot.instance, entries, requests, run, (ran, error) => this.failedWhole(ran, error))
        .catch((err: unknown) => this.answers.internalError(entries, err))
        .finally(done);
      return;
    }
    // Runs synchronously up to the instance's execute call, so batches start in dispatch order.
    this.runBatch(slot, entries, signal, now)
      .catch((err: unknown) => this.answers.internalError(entries, err))
      .finally(done);
  }

  /** Who an execution of `entries` on `slot` runs for (BLS calls it makes carry these callers), and whether it is a crash retry. */
  private contextOf(slot: InstanceSlot, entries: readonly DynamicEntry[]): ExecuteContext {
    const crashRetry = entries.length === 1 && entries[0]!.crash !== undefined;
    return executionContext(slot.context, entries.map((e) => e.request), crashRetry);
  }

  private padded(entries: readonly DynamicEntry[]): InferRequest[] {
    const requests = entries.map((e) => e.request);
    return this.opts.padding.size > 0 ? padBatch(requests, this.opts.padding) : requests;
  }

  /** One batch on its instance: executed, and bisected if it fails as a whole (poison isolation). */
  private runBatch(slot: InstanceSlot, entries: DynamicEntry[], signal: AbortSignal, dispatchedUs: number): Promise<void> {
    // The first attempt starts when the batch left the queue: queue and compute meet exactly.
    return this.attempt(slot, entries, signal, dispatchedUs).then((error) => {
      if (!error) return undefined;
      return isolatePoison(entries, error, {
        pending: (e) => e.state === 'running',
        run: (part) => this.attempt(slot, part, signal),
        fail: (part, err) => this.answers.failAll(part, err, 'BACKEND'),
        abandoned: () => signal.aborted,
      });
    });
  }

  /**
   * Executes the entries not answered yet as one batch and answers each with its result. Resolves
   * with the error when the execution failed as a whole (the entries are then left unanswered).
   * Plain promise chaining, no async function: this is every execution's path.
   */
  private attempt(slot: InstanceSlot, entries: readonly DynamicEntry[], signal: AbortSignal, startedUs?: number): Promise<InferError | undefined> {
    // Not those answered meanwhile, nor those a crash sent to be re-run alone.
    const live = entries.every((e) => e.state === 'running') ? entries : entries.filter((e) => e.state === 'running');
    if (live.length === 0) return Promise.resolve(undefined);
    let requests: InferRequest[];
    try {
      requests = this.padded(live);
    } catch (err) {
      this.answers.failAll(live, InferError.from(err, 'INVALID_ARG'), 'OTHER');
      return Promise.resolve(undefined);
    }
    let batchSize = 0;
    const startUs = startedUs ?? this.clock.nowUs();
    for (const e of live) {
      batchSize += e.batchSize;
      e.responseStartUs = startUs;
    }
    let call: Promise<ExecuteOutput>;
    try {
      call = slot.instance.execute(requests, signal, this.contextOf(slot, live));
    } catch (err) {
      call = Promise.reject(err);
    }
    const tokens = executionTokens(live.map((e) => e.request), requests, this.opts.tokenInput);
    return call.then(
      (output) => {
        const timings = this.answers.executed(live, batchSize, startUs, output?.timings, tokens);
        this.answer(live, requests, output, timings);
        return undefined;
      },
      (err: unknown) => {
        this.answers.executed(live, batchSize, startUs, undefined, tokens);
        const error = InferError.from(err);
        if (!isInstanceFailure(error)) return error;
        this.crashed(live, error);
        return undefined;
      },
    );
  }

  /** The instance failed running `ran`: its requests are re-run alone, or fail (crash-retry.ts). */
  private crashed(ran: readonly DynamicEntry[], error: InferError): void {
    const retried = this.retries.crashed(ran, error);
    if (retried === 0) return;
    for (const e of ran) if (e.state === 'retry') e.batch = undefined;
    this.deps.pump();
  }

  /** A decoupled execution failed as a whole: a crash is handled as crash-retry.ts says; any other error fails its requests. */
  private failedWhole(ran: readonly DynamicEntry[], error: InferError): void {
    if (isInstanceFailure(error)) this.crashed(ran, error);
    else this.answers.failAll(ran, error, 'BACKEND');
  }

  /** Answers each entry of a completed execution with its own result. */
  private answer(live: readonly DynamicEntry[], requests: readonly InferRequest[], output: ExecuteOutput, timings: Timings): void {
    const unpad = this.opts.unpadding;
    this.answers.answerEach(live, output, (e, response, i) => {
      if (unpad.size > 0 && requests[i] !== e.request) this.finishUnpadded(e, response, timings);
      else this.answers.finish(e, response, undefined, timings);
    });
  }

  private finishUnpadded(entry: DynamicEntry, response: InferResponse, timings: Timings): void {
    try {
      this.answers.finish(entry, unpadResponse(response, entry.request, this.opts.unpadding), undefined, timings);
    } catch (err) {
      this.answers.finish(entry, InferError.from(err), 'OTHER');
    }
  }
}
