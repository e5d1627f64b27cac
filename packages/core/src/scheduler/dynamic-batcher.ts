/**
 * Triton's dynamic batcher (docs/triton-compatibility.md §3) with Tritium's improvements:
 * - queue timeouts fire on real timers (Clock.setTimer), even while every instance is busy;
 * - without `preserve_ordering`, a request whose shape differs from the batch head is skipped for
 *   this batch instead of cutting it short; it stays at the head of the queue, so it heads the
 *   next batch (never starved);
 * - opt-in padding-aware batching (`tritium.pad.<INPUT>` parameters, see tensor/pad.ts);
 * - poison isolation: a batch whose execute fails as a whole is bisected (poison-isolation.ts); the
 *   requests of a batch whose instance crashed are re-run alone, once (crash-retry.ts);
 * - BLS cycles are refused at once (call-cycles.ts);
 * - adaptive batching (`tritium.batching: adaptive`): the queue delay is waited out only while it
 *   pays off (adaptive-delay.ts).
 *
 * Concurrency: one batch in flight per instance; all instances run concurrently. Everything runs
 * on the caller's event loop; no locks. Every accepted request is answered exactly once.
 */
import { InferError } from '../errors.ts';
import type { ExecuteContext, ExecuteOutput, ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import { CallCycleGuard, executionContext } from './call-cycles.ts';
import { isolatePoison } from './poison-isolation.ts';
import { crashedBatchMessage, mayRetryAfterCrash, poisonMessage } from './crash-retry.ts';
import { isInstanceFailure } from '../backend/instance-failure.ts';
import { padBatch, unpadResponse } from '../tensor/pad.ts';
import type { BatcherOptions } from './batcher-options.ts';
import { formBatch, formationRules, type Candidate, type FormationRules } from './batch-formation.ts';
import { RequestQueue } from './request-queue.ts';
import { systemClock, type Clock, type Scheduler } from './scheduler.ts';
import { guardedStats } from './guarded-stats.ts';
import { AdaptiveDelay } from './adaptive-delay.ts';
import { EarliestTimer } from './earliest-timer.ts';
import { onAbort } from './abort-listeners.ts';
import { nullStatsRecorder, type StatsRecorder } from './stats-recorder.ts';
import { BatchAnswers, CANCELLED_MESSAGE, type AnsweredRequest, type Deliver, type Timings } from './batch-answers.ts';
import { Execution } from './execution.ts';

export interface BatcherDeps {
  readonly instances: readonly ModelInstance[];
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
  readonly log?: Logger;
  /** Decoupled model: executions go through `executeDecoupled`. */
  readonly decoupled?: boolean;
  /**
   * Report COMPUTE_* activities to the traces of the requests an execution carried (default true).
   * False for a pipeline ensemble's batcher: its "execution" is the steps, which trace themselves.
   */
  readonly traceCompute?: boolean;
  /**
   * Holds a batch that is ready but below the smallest preferred size (a pipeline ensemble whose
   * last step is busy, see ensemble/runtime/pipeline-hold.ts): how long it may wait for more requests.
   */
  readonly hold?: BatchHold;
}

/** See BatcherDeps.hold. */
export interface BatchHold {
  /** Microseconds a ready batch of `size` rows may still wait at `nowUs` (0: send it now). */
  holdUs(nowUs: number, size: number): number;
}

interface Entry extends Candidate, AnsweredRequest {
  readonly timeoutAction: 'REJECT' | 'DELAY';
  /** Its queue policy's timeout (µs from arrival; 0: none). Bounds a crash retry too. */
  readonly timeoutUs: number;
  /** The crash this request is re-run after (its one retry is spent). */
  crash: InferError | undefined;
  batch?: Execution<Entry>;
}

interface Slot {
  readonly instance: ModelInstance;
  busy: boolean;
  /** The context of an execution on this slot whose requests have no callers (most of them). */
  readonly context: ExecuteContext;
}

/** The dynamic batcher (also the direct scheduler when `options.batching` is false). */
export class DynamicBatcher implements Scheduler {
  private readonly opts: BatcherOptions;
  private readonly clock: Clock;
  private readonly stats: StatsRecorder;
  private readonly log: Logger;
  private readonly decoupled: boolean;
  private readonly answers: BatchAnswers<Entry>;
  private readonly slots: Slot[];
  private readonly cycles: CallCycleGuard;
  private readonly queue: RequestQueue<Entry>;
  private readonly formation: FormationRules;
  /** Requests of crashed batches waiting to be re-run alone, served before the queue. */
  private readonly retries: Entry[] = [];
  /** Ends a queue delay or a hold. */
  private readonly delayTimer: EarliestTimer;
  private pumping = false;
  private repump = false;
  private stopped = false;
  /** Set with `tritium.batching: adaptive`. */
  private readonly adaptive: AdaptiveDelay | undefined;
  private readonly hold: BatchHold | undefined;
  /** Rows below which a ready batch may be held (the smallest preferred size, else the maximum). */
  private readonly holdBelow: number;
  /** The end of the hold under way (one per batch: a held batch is sent when it ends). */
  private holdUntilUs: number | undefined;
  /** When the last hold ended: requests queued before then already waited through one. */
  private lastHoldEndUs = Number.NEGATIVE_INFINITY;

  constructor(options: BatcherOptions, deps: BatcherDeps) {
    this.opts = options;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log ?? silentLogger;
    this.stats = deps.stats ? guardedStats(deps.stats, this.log, options.modelName) : nullStatsRecorder;
    this.decoupled = !!deps.decoupled;
    this.adaptive = options.adaptive && options.batching && options.maxQueueDelayUs > 0 ? new AdaptiveDelay() : undefined;
    this.cycles = new CallCycleGuard(options.modelName, deps.instances.length);
    this.delayTimer = new EarliestTimer(this.clock, () => this.pump());
    this.answers = new BatchAnswers<Entry>({
      model: options.modelName,
      clock: this.clock,
      stats: this.stats,
      log: this.log,
      decoupled: this.decoupled,
      cycles: this.cycles,
      accept: (request, deliver, sink) => this.accept(request, deliver, sink),
      traceCompute: deps.traceCompute !== false,
      preserveOrdering: options.preserveOrdering,
    });
    this.slots = deps.instances.map((instance, i) => ({ instance, busy: false, context: { callers: [this.cycles.frames[i]!] } }));
    this.queue = new RequestQueue<Entry>(options.levelCount);
    this.formation = formationRules(options);
    this.hold = options.batching ? deps.hold : undefined;
    this.holdBelow = options.preferredBatchSizes.length > 0 ? Math.min(...options.preferredBatchSizes) : options.maxBatchSize;
  }

  get inflight(): number {
    return this.answers.inflight;
  }

  /** Requests waiting in the queue (not yet executing). */
  get queued(): number {
    return this.queue.size;
  }

  enqueue(request: InferRequest): Promise<InferResponse> {
    return this.answers.unary(request);
  }

  enqueueStream(request: InferRequest, sink: ResponseSink): void {
    this.answers.stream(request, sink);
  }

  stop(): Promise<void> {
    this.stopped = true;
    // While stopping, nothing more will arrive: what is queued is sent without waiting.
    this.pump();
    return this.answers.drain();
  }

  // ---- admission -------------------------------------------------------------------------

  private accept(request: InferRequest, deliver: Deliver, sink?: ResponseSink): void {
    const o = this.opts;
    if (this.stopped) {
      deliver(new InferError('UNAVAILABLE', `model '${o.modelName}' version ${o.version} is not accepting requests (unloading)`));
      return;
    }
    if (this.slots.length === 0) {
      deliver(new InferError('UNAVAILABLE', `model '${o.modelName}' version ${o.version} has no instances to run requests`));
      return;
    }
    if (request.signal?.aborted) return this.answers.refuse(request, deliver, new InferError('CANCELLED', CANCELLED_MESSAGE), 'CANCELED');
    let batchSize: number;
    let key: string;
    try {
      batchSize = o.batchSize(request);
      key = o.shapeKey(request);
    } catch (e) {
      return this.answers.refuse(request, deliver, InferError.from(e, 'INVALID_ARG'), 'OTHER');
    }
    let holds: Entry['holds'];
    try {
      holds = this.cycles.admit(request);
    } catch (e) {
      return this.answers.refuse(request, deliver, InferError.from(e), 'OTHER');
    }
    const p = request.priority ?? 0;
    const level = p >= 1 && p <= o.levelCount && o.levelCount > 1 ? p - 1 : o.defaultLevel;
    const policy = o.policyOf(level);
    if (policy.maxQueueSize > 0 && this.queue.sizeOf(level) >= policy.maxQueueSize) {
      if (holds) this.cycles.release(holds);
      // Under overload this answer is given thousands of times a second: keep it cheap (no stack).
      const full = InferError.quick('UNAVAILABLE', `${request.id ? `[request id: ${request.id}] ` : ''}Exceeds maximum queue size`);
      return this.answers.refuse(request, deliver, full, 'REJECTED');
    }
    // Triton (PolicyQueue::Enqueue): the request's timeout only ever lowers a non-zero default.
    let timeoutUs = policy.defaultTimeoutUs;
    const override = request.timeoutUs ?? 0;
    if (policy.allowTimeoutOverride && override > 0 && override < timeoutUs) timeoutUs = override;

    const now = this.clock.nowUs();
    const entry: Entry = {
      request,
      batchSize,
      key,
      arrivalUs: now,
      preformed: request.preformed === true,
      timeoutAction: policy.timeoutAction,
      timeoutUs,
      deliver,
      sink,
      level,
      lane: undefined,
      state: 'queued',
      crash: undefined,
      queueNs: 0,
      responses: 0,
      holds,
    };
    this.answers.admitted(entry);
    this.adaptive?.arrived();
    this.queue.push(entry);
    if (timeoutUs > 0) entry.timer = this.clock.setTimer(timeoutUs, () => this.expire(entry));
    if (request.signal) entry.unlisten = onAbort(request.signal, () => this.cancel(entry));
    this.pump();
  }

  private expire(entry: Entry): void {
    entry.timer = undefined;
    if (entry.state === 'retry') {
      // Its timeout passed while it waited to be re-run: it keeps the crash that failed its batch.
      this.retries.splice(this.retries.indexOf(entry), 1);
      this.answers.finish(entry, entry.crash!, 'BACKEND');
      return;
    }
    if (entry.state !== 'queued') return;
    if (entry.timeoutAction === 'DELAY') {
      this.queue.delay(entry);
      return;
    }
    this.queue.remove(entry);
    this.answers.finish(entry, new InferError('UNAVAILABLE', 'Request timeout expired'), 'REJECTED');
    this.pump();
  }

  private cancel(entry: Entry): void {
    if (entry.state === 'done') return;
    const wasQueued = entry.state === 'queued';
    if (wasQueued) this.queue.remove(entry);
    else if (entry.state === 'retry') this.retries.splice(this.retries.indexOf(entry), 1);
    const running = entry.batch;
    // The server aborts with its own error when the request's deadline passed (an expired request:
    // UNAVAILABLE, counted REJECTED as Triton counts queue timeouts); anything else is a cancellation.
    const reason: unknown = entry.request.signal?.reason;
    if (InferError.is(reason) && reason.code !== 'CANCELLED') this.answers.finish(entry, reason, 'REJECTED');
    else this.answers.finish(entry, new InferError('CANCELLED', CANCELLED_MESSAGE), 'CANCELED');
    running?.answeredEarly();
    if (wasQueued) this.pump();
  }

  // ---- batch formation -------------------------------------------------------------------

  /**
   * An idle instance for the next batch: a healthy one; a down one (crash loop) only when no instance
   * is healthy, busy or not — while a healthy instance is merely busy, the batch waits for it rather
   * than for a restart that may never come (or fail on the way).
   */
  private idleSlot(): Slot | undefined {
    let fallback: Slot | undefined;
    let anyHealthy = false;
    for (const s of this.slots) {
      const healthy = s.instance.healthy !== false;
      anyHealthy ||= healthy;
      if (s.busy) continue;
      if (healthy) return s;
      fallback ??= s;
    }
    return anyHealthy ? undefined : fallback;
  }

  /** Forms and dispatches batches while an instance is idle and the queue has work. */
  private pump(): void {
    if (this.pumping) {
      this.repump = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.repump = false;
        for (;;) {
          if (this.retries.length > 0) {
            const slot = this.idleSlot();
            if (!slot) break;
            this.dispatch(slot, [this.retries.shift()!], this.clock.nowUs());
            continue;
          }
          if (this.queue.size === 0) break;
          const slot = this.idleSlot();
          if (!slot) break;
          const now = this.clock.nowUs();
          const decision = this.formBatch(now);
          // While stopping, nothing more will arrive: send what is queued without waiting.
          if (decision.waitUs > 0 && !this.stopped && (!this.adaptive || this.adaptive.shouldWait(now, decision.waitUs))) {
            this.delayTimer.armAt(now + decision.waitUs);
            break;
          }
          if (this.held(now, decision.entries)) break;
          this.adaptive?.dispatched(now);
          this.dispatch(slot, decision.entries, now);
        }
      } while (this.repump);
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Whether a ready batch waits out a hold (arming the timer that ends it). A hold never grows: more
   * arrivals reaching the smallest preferred size, or its end, send the batch. A request is held at
   * most once (a batch whose head waited through an earlier hold is not held), so none waits more
   * than the queue delay plus one hold beyond what instances being busy costs it.
   */
  private held(now: number, entries: readonly Entry[]): boolean {
    if (!this.hold || this.stopped) return false;
    let size = 0;
    for (const e of entries) size += e.batchSize;
    if (size < this.holdBelow) {
      if (this.holdUntilUs === undefined && entries[0]!.arrivalUs > this.lastHoldEndUs) {
        const us = this.hold.holdUs(now, size);
        if (us > 0) this.holdUntilUs = now + us;
      }
      if (this.holdUntilUs !== undefined && now < this.holdUntilUs) {
        this.delayTimer.armAt(this.holdUntilUs);
        return true;
      }
    }
    if (this.holdUntilUs !== undefined) {
      this.holdUntilUs = undefined;
      this.lastHoldEndUs = now;
    }
    return false;
  }

  private formBatch(now: number): { entries: Entry[]; waitUs: number } {
    return formBatch(this.queue, this.formation, now);
  }

  // ---- execution -------------------------------------------------------------------------

  private dispatch(slot: Slot, entries: Entry[], now: number): void {
    // Decoupled: a request may be answered while its execution still runs; then its signal must not stop it.
    const running = new Execution(entries, !this.decoupled);
    const signal = running.signal;
    for (const e of entries) {
      // A request re-run after a crash left the queue already (its queue time stays the first one).
      const fromQueue = e.state === 'queued';
      this.queue.remove(e);
      e.state = 'running';
      e.batch = running;
      e.timer?.cancel();
      e.timer = undefined;
      if (fromQueue) this.answers.dequeued(e, now);
    }
    slot.busy = true;
    const done = (): void => {
      slot.busy = false;
      this.pump();
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
  private contextOf(slot: Slot, entries: readonly Entry[]): ExecuteContext {
    const crashRetry = entries.length === 1 && entries[0]!.crash !== undefined;
    return executionContext(slot.context, entries.map((e) => e.request), crashRetry);
  }

  private padded(entries: readonly Entry[]): InferRequest[] {
    const requests = entries.map((e) => e.request);
    return this.opts.padding.size > 0 ? padBatch(requests, this.opts.padding) : requests;
  }

  /** One batch on its instance: executed, and bisected if it fails as a whole (poison isolation). */
  private runBatch(slot: Slot, entries: Entry[], signal: AbortSignal, dispatchedUs: number): Promise<void> {
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
  private attempt(slot: Slot, entries: readonly Entry[], signal: AbortSignal, startedUs?: number): Promise<InferError | undefined> {
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
    return call.then(
      (output) => {
        const timings = this.answers.executed(live, batchSize, startUs, output?.timings);
        this.answer(live, requests, output, timings);
        return undefined;
      },
      (err: unknown) => {
        this.answers.executed(live, batchSize, startUs);
        const error = InferError.from(err);
        if (!isInstanceFailure(error)) return error;
        this.crashed(live, error);
        return undefined;
      },
    );
  }

  /**
   * The instance failed running `ran` (crash-retry.ts): alone, the request is the cause and fails;
   * of a batch, each request that may be re-run waits in `retries` (served first) and the others
   * fail with the crash's error.
   */
  private crashed(ran: readonly Entry[], error: InferError): void {
    const o = this.opts;
    if (ran.length === 1) {
      const e = ran[0]!;
      if (e.state === 'done') return;
      this.stats.poisonIsolated?.();
      this.log.warn(poisonMessage(o.modelName, o.version, e.request, e.crash !== undefined, error));
      this.answers.finish(e, error, 'BACKEND');
      return;
    }
    const now = this.clock.nowUs();
    let retried = 0;
    for (const e of ran) {
      if (e.state === 'done') continue;
      if (!mayRetryAfterCrash(e, now)) {
        this.answers.finish(e, error, 'BACKEND');
        continue;
      }
      retried++;
      e.state = 'retry';
      e.crash = error;
      e.batch = undefined;
      if (e.timeoutUs > 0) e.timer = this.clock.setTimer(e.arrivalUs + e.timeoutUs - now, () => this.expire(e));
      this.retries.push(e);
      this.stats.crashRetried?.();
    }
    this.log.warn(crashedBatchMessage(o.modelName, o.version, ran.length, retried, error));
    if (retried > 0) this.pump();
  }

  /** A decoupled execution failed as a whole: a crash is handled as crash-retry.ts says; any other error fails its requests. */
  private failedWhole(ran: readonly Entry[], error: InferError): void {
    if (isInstanceFailure(error)) this.crashed(ran, error);
    else this.answers.failAll(ran, error, 'BACKEND');
  }

  /** Answers each entry of a completed execution with its own result. */
  private answer(live: readonly Entry[], requests: readonly InferRequest[], output: ExecuteOutput, timings: Timings): void {
    const unpad = this.opts.unpadding;
    this.answers.answerEach(live, output, (e, response, i) => {
      if (unpad.size > 0 && requests[i] !== e.request) this.finishUnpadded(e, response, timings);
      else this.answers.finish(e, response, undefined, timings);
    });
  }

  private finishUnpadded(entry: Entry, response: InferResponse, timings: Timings): void {
    try {
      this.answers.finish(entry, unpadResponse(response, entry.request, this.opts.unpadding), undefined, timings);
    } catch (err) {
      this.answers.finish(entry, InferError.from(err), 'OTHER');
    }
  }
}
