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
import type { ExecuteContext, ExecuteOutput, ExecuteTimings, ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import { silentLogger } from '../logger.ts';
import type { CallFrame, InferRequest, InferResponse, ResponseSink } from '../types.ts';
import { CallCycleGuard, executionCallers } from './call-cycles.ts';
import { isolatePoison } from './poison-isolation.ts';
import { crashedBatchMessage, mayRetryAfterCrash, poisonMessage } from './crash-retry.ts';
import { isInstanceFailure } from '../backend/instance-failure.ts';
import { padBatch, unpadResponse } from '../tensor/pad.ts';
import { reportCompute } from '../trace/request-trace.ts';
import type { BatcherOptions } from './batcher-options.ts';
import { formBatch, formationRules, type Candidate, type FormationRules } from './batch-formation.ts';
import { RequestQueue } from './request-queue.ts';
import { systemClock, type Clock, type Scheduler } from './scheduler.ts';
import { guardedStats } from './guarded-stats.ts';
import { AdaptiveDelay } from './adaptive-delay.ts';
import { onAbort } from './abort-listeners.ts';
import { nullStatsRecorder, type FailureReason, type StatsRecorder } from './stats-recorder.ts';

/** Triton's status for a cancelled request carries no text; we say what happened. */
export const CANCELLED_MESSAGE = 'request cancelled';

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

/** Outcome of an entry: a response, an error, or null for a stream completed without error. */
type Outcome = InferResponse | InferError | null;

interface Entry extends Candidate {
  readonly request: InferRequest;
  readonly timeoutAction: 'REJECT' | 'DELAY';
  /** Its queue policy's timeout (µs from arrival; 0: none). Bounds a crash retry too. */
  readonly timeoutUs: number;
  /** Resolves a unary call, or forwards to a stream sink. */
  readonly deliver: (outcome: Outcome) => void;
  readonly sink?: ResponseSink;
  /** `retry`: waiting in `retries` to be re-run alone after a crash (crash-retry.ts). */
  state: 'queued' | 'retry' | 'running' | 'done';
  /** The crash this request is re-run after (its one retry is spent). */
  crash: InferError | undefined;
  queueNs: number;
  timer?: { cancel(): void };
  /** Stops listening on the request's signal (see abort-listeners.ts). */
  unlisten?: () => void;
  batch?: Running;
  /** Answered (outcome known); with preserve_ordering it may still wait in `held`. */
  settled: boolean;
  /** The outcome was handed to the caller. */
  delivered: boolean;
  /** preserve_ordering: outcome waiting for earlier requests. */
  held?: Outcome;
  /** Responses sent so far (decoupled): the index of the next one in the response statistics. */
  responses: number;
  /** When the model started on the response to come: the execution's start, then each response. */
  responseStartUs?: number;
  /** Own slots this request's callers hold (BLS), released when it is answered. */
  holds: CallFrame[] | undefined;
}

interface Running {
  readonly entries: Entry[];
  /**
   * Aborted once nobody in the batch waits any more. Only a batch of several requests, one of them
   * cancellable, gets one: a one-request batch runs under that request's own signal, which aborts
   * exactly then (creating an AbortSignal costs ~2 us of main-thread CPU, per execution here).
   */
  readonly controller: AbortController | undefined;
}

/** The signal of batches nobody can cancel. */
const NEVER_ABORTED = new AbortController().signal;

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
  private readonly traceCompute: boolean;
  private readonly slots: Slot[];
  private readonly cycles: CallCycleGuard;
  private readonly queue: RequestQueue<Entry>;
  private readonly formation: FormationRules;
  private readonly order: Entry[] = [];
  /** Requests of crashed batches waiting to be re-run alone, served before the queue. */
  private readonly retries: Entry[] = [];
  private orderHead = 0;
  private delayTimer: { cancel(): void; at: number } | undefined;
  private pumping = false;
  private repump = false;
  private stopped = false;
  private drained: (() => void) | undefined;
  private count = 0;
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
    this.traceCompute = deps.traceCompute !== false;
    this.adaptive = options.adaptive && options.batching && options.maxQueueDelayUs > 0 ? new AdaptiveDelay() : undefined;
    this.cycles = new CallCycleGuard(options.modelName, deps.instances.length);
    this.slots = deps.instances.map((instance, i) => ({ instance, busy: false, context: { callers: [this.cycles.frames[i]!] } }));
    this.queue = new RequestQueue<Entry>(options.levelCount);
    this.formation = formationRules(options);
    this.hold = options.batching ? deps.hold : undefined;
    this.holdBelow = options.preferredBatchSizes.length > 0 ? Math.min(...options.preferredBatchSizes) : options.maxBatchSize;
  }

  get inflight(): number {
    return this.count;
  }

  /** Requests waiting in the queue (not yet executing). */
  get queued(): number {
    return this.queue.size;
  }

  enqueue(request: InferRequest): Promise<InferResponse> {
    return new Promise<InferResponse>((resolve, reject) => {
      if (!this.decoupled) {
        this.accept(request, (o) => (o && !InferError.is(o) ? resolve(o) : reject(o ?? new InferError('INTERNAL', 'no response'))));
        return;
      }
      // A unary call to a decoupled model: exactly one response is expected.
      const responses: InferResponse[] = [];
      const sink: ResponseSink = {
        response: (r) => void responses.push(r),
        complete: (error) => {
          if (error) reject(error);
          else if (responses.length === 1) resolve(responses[0]!);
          else
            reject(
              new InferError(
                'UNSUPPORTED',
                `model '${this.opts.modelName}' is decoupled and sent ${responses.length} responses; use a streaming call`,
              ),
            );
        },
      };
      this.enqueueStream(request, sink);
    });
  }

  enqueueStream(request: InferRequest, sink: ResponseSink): void {
    this.accept(
      request,
      (o) => {
        if (InferError.is(o)) sink.complete(o);
        else {
          if (o) sink.response(o);
          sink.complete();
        }
      },
      this.decoupled ? sink : undefined,
    );
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.count === 0) return Promise.resolve();
    this.pump();
    return new Promise((resolve) => {
      const prev = this.drained;
      this.drained = () => {
        prev?.();
        resolve();
      };
    });
  }

  // ---- admission -------------------------------------------------------------------------

  private accept(request: InferRequest, deliver: (o: Outcome) => void, sink?: ResponseSink): void {
    const o = this.opts;
    if (this.stopped) {
      deliver(new InferError('UNAVAILABLE', `model '${o.modelName}' version ${o.version} is not accepting requests (unloading)`));
      return;
    }
    if (this.slots.length === 0) {
      deliver(new InferError('UNAVAILABLE', `model '${o.modelName}' version ${o.version} has no instances to run requests`));
      return;
    }
    if (request.signal?.aborted) {
      this.failedBeforeQueue(request, 'CANCELED');
      deliver(new InferError('CANCELLED', CANCELLED_MESSAGE));
      return;
    }
    let batchSize: number;
    let key: string;
    try {
      batchSize = o.batchSize(request);
      key = o.shapeKey(request);
    } catch (e) {
      this.failedBeforeQueue(request, 'OTHER');
      deliver(InferError.from(e, 'INVALID_ARG'));
      return;
    }
    let holds: CallFrame[] | undefined;
    try {
      holds = this.cycles.admit(request);
    } catch (e) {
      this.failedBeforeQueue(request, 'OTHER');
      deliver(InferError.from(e));
      return;
    }
    const p = request.priority ?? 0;
    const level = p >= 1 && p <= o.levelCount && o.levelCount > 1 ? p - 1 : o.defaultLevel;
    const policy = o.policyOf(level);
    if (policy.maxQueueSize > 0 && this.queue.sizeOf(level) >= policy.maxQueueSize) {
      if (holds) this.cycles.release(holds);
      this.failedBeforeQueue(request, 'REJECTED');
      // Under overload this answer is given thousands of times a second: keep it cheap (no stack).
      deliver(InferError.quick('UNAVAILABLE', `${request.id ? `[request id: ${request.id}] ` : ''}Exceeds maximum queue size`));
      return;
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
      settled: false,
      delivered: false,
      responses: 0,
      holds,
    };
    this.count++;
    for (let i = weightOf(request); i > 0; i--) this.stats.requestQueued();
    request.trace?.report('QUEUE_START', now * 1000);
    this.adaptive?.arrived();
    this.queue.push(entry);
    if (o.preserveOrdering) this.order.push(entry);
    if (timeoutUs > 0) entry.timer = this.clock.setTimer(timeoutUs, () => this.expire(entry));
    if (request.signal) entry.unlisten = onAbort(request.signal, () => this.cancel(entry));
    this.pump();
  }

  private expire(entry: Entry): void {
    entry.timer = undefined;
    if (entry.state === 'retry') {
      // Its timeout passed while it waited to be re-run: it keeps the crash that failed its batch.
      this.retries.splice(this.retries.indexOf(entry), 1);
      this.finish(entry, entry.crash!, 'BACKEND');
      return;
    }
    if (entry.state !== 'queued') return;
    if (entry.timeoutAction === 'DELAY') {
      this.queue.delay(entry);
      return;
    }
    this.queue.remove(entry);
    this.finish(entry, new InferError('UNAVAILABLE', 'Request timeout expired'), 'REJECTED');
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
    if (InferError.is(reason) && reason.code !== 'CANCELLED') this.finish(entry, reason, 'REJECTED');
    else this.finish(entry, new InferError('CANCELLED', CANCELLED_MESSAGE), 'CANCELED');
    // Abort the execution once nobody in it is waiting any more.
    if (running && running.entries.every((e) => e.state === 'done')) running.controller?.abort();
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
            this.armDelay(now + decision.waitUs);
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
        this.armDelay(this.holdUntilUs);
        return true;
      }
    }
    if (this.holdUntilUs !== undefined) {
      this.holdUntilUs = undefined;
      this.lastHoldEndUs = now;
    }
    return false;
  }

  private armDelay(at: number): void {
    if (this.delayTimer && this.delayTimer.at <= at) return;
    this.delayTimer?.cancel();
    const t = this.clock.setTimer(at - this.clock.nowUs(), () => {
      if (this.delayTimer === timer) this.delayTimer = undefined;
      this.pump();
    });
    const timer = { cancel: () => t.cancel(), at };
    this.delayTimer = timer;
  }

  private formBatch(now: number): { entries: Entry[]; waitUs: number } {
    return formBatch(this.queue, this.formation, now);
  }

  // ---- execution -------------------------------------------------------------------------

  private dispatch(slot: Slot, entries: Entry[], now: number): void {
    // Decoupled: a request may be answered while its execution still runs; then its signal must not stop it.
    const only = entries.length === 1 && !this.decoupled ? entries[0]!.request.signal : undefined;
    const running: Running = { entries, controller: !only && entries.some((e) => e.request.signal) ? new AbortController() : undefined };
    const signal = only ?? running.controller?.signal ?? NEVER_ABORTED;
    for (const e of entries) {
      // A request re-run after a crash left the queue already (its queue time stays the first one).
      const fromQueue = e.state === 'queued';
      this.queue.remove(e);
      e.state = 'running';
      e.batch = running;
      e.timer?.cancel();
      e.timer = undefined;
      if (!fromQueue) continue;
      e.queueNs = (now - e.arrivalUs) * 1000;
      for (let i = weightOf(e.request); i > 0; i--) this.stats.requestDequeued(e.queueNs);
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
        this.failBatch(entries, InferError.from(err, 'INVALID_ARG'), 'OTHER');
        done();
        return;
      }
      const batchSize = entries.reduce((n, e) => n + e.batchSize, 0);
      this.runDecoupled(slot, entries, requests, signal, now, batchSize)
        .catch((err: unknown) => this.internalError(entries, err))
        .finally(done);
      return;
    }
    // Runs synchronously up to the instance's execute call, so batches start in dispatch order.
    this.runBatch(slot, entries, signal, now)
      .catch((err: unknown) => this.internalError(entries, err))
      .finally(done);
  }

  /** Who an execution of `entries` on `slot` runs for (BLS calls it makes carry these callers), and whether it is a crash retry. */
  private contextOf(slot: Slot, entries: readonly Entry[]): ExecuteContext {
    const crashRetry = entries.length === 1 && entries[0]!.crash !== undefined;
    if (!crashRetry && !entries.some((e) => e.request.callers && e.request.callers.length > 0)) return slot.context;
    const callers = executionCallers(entries.map((e) => e.request), slot.context.callers);
    return crashRetry ? { callers, crashRetry } : { callers };
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
        fail: (part, err) => this.failBatch(part, err, 'BACKEND'),
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
      this.failBatch(live, InferError.from(err, 'INVALID_ARG'), 'OTHER');
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
        const timings = this.recordExecution(batchSize, startUs, output?.timings);
        this.traceExecution(live, startUs, timings);
        this.answer(live, requests, output, timings);
        return undefined;
      },
      (err: unknown) => {
        this.traceExecution(live, startUs, this.recordExecution(batchSize, startUs));
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
      this.finish(e, error, 'BACKEND');
      return;
    }
    const now = this.clock.nowUs();
    let retried = 0;
    for (const e of ran) {
      if (e.state === 'done') continue;
      if (!mayRetryAfterCrash(e, now)) {
        this.finish(e, error, 'BACKEND');
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

  /** Answers each entry of a completed execution with its own result. */
  private answer(live: readonly Entry[], requests: readonly InferRequest[], output: ExecuteOutput, timings: Required<ExecuteTimings>): void {
    const results = output?.results ?? [];
    if (results.length !== live.length) {
      this.failBatch(
        live,
        new InferError('INTERNAL', `model '${this.opts.modelName}' instance returned ${results.length} results for ${live.length} requests`),
        'BACKEND',
      );
      return;
    }
    const unpad = this.opts.unpadding;
    results.forEach((r, i) => {
      const e = live[i]!;
      if (InferError.is(r)) this.finish(e, r, 'BACKEND');
      else if (unpad.size > 0 && requests[i] !== e.request) this.finishUnpadded(e, r, timings);
      else this.finish(e, r, undefined, timings);
    });
  }

  private finishUnpadded(entry: Entry, response: InferResponse, timings: Required<ExecuteTimings>): void {
    try {
      this.finish(entry, unpadResponse(response, entry.request, this.opts.unpadding), undefined, timings);
    } catch (err) {
      this.finish(entry, InferError.from(err), 'OTHER');
    }
  }

  /**
   * Decoupled execution. A request may complete before `executeDecoupled` resolves with the call's
   * timings: it is answered at once, and its success statistics wait for those timings.
   */
  private async runDecoupled(slot: Slot, entries: Entry[], requests: InferRequest[], signal: AbortSignal, startUs: number, batchSize: number): Promise<void> {
    const exec = slot.instance.executeDecoupled;
    if (!exec) {
      this.failBatch(entries, new InferError('INTERNAL', `model '${this.opts.modelName}' is decoupled but its instance has no executeDecoupled`), 'OTHER');
      return;
    }
    let timings: Required<ExecuteTimings> | undefined;
    const awaitingTimings: { entry: Entry; totalNs: number }[] = [];
    for (const e of entries) e.responseStartUs = startUs;
    const sinks: ResponseSink[] = entries.map((e) => ({
      response: (r) => {
        if (e.state === 'done') return;
        const now = this.clock.nowUs();
        if (e.responses === 0) this.stats.firstResponse?.((now - e.arrivalUs) * 1000);
        this.stats.response?.(e.responses++, 'success', { inferNs: (now - (e.responseStartUs ?? now)) * 1000, outputNs: 0 });
        e.responseStartUs = now;
        return e.sink?.response(r);
      },
      complete: (error) => {
        if (error) this.finish(e, InferError.from(error), 'BACKEND');
        else if (timings) this.finish(e, null, undefined, timings);
        else {
          const totalNs = this.finish(e, null, undefined, 'later');
          if (totalNs !== undefined) awaitingTimings.push({ entry: e, totalNs });
        }
      },
    }));
    try {
      const context = this.contextOf(slot, entries);
      timings = this.recordExecution(batchSize, startUs, (await exec.call(slot.instance, requests, sinks, signal, context)) ?? undefined);
      this.traceExecution(entries, startUs, timings);
    } catch (err) {
      timings = this.recordExecution(batchSize, startUs);
      this.traceExecution(entries, startUs, timings);
      const error = InferError.from(err);
      if (isInstanceFailure(error)) this.crashed(entries, error);
      else this.failBatch(entries, error, 'BACKEND');
    }
    for (const { entry } of awaitingTimings) entry.request.computeSink?.add(timings);
    for (const { entry, totalNs } of awaitingTimings) this.succeeded(entry, totalNs, timings);
  }

  /** COMPUTE_* of one execution on the traces of the requests it carried. */
  private traceExecution(entries: readonly Entry[], startUs: number, timings: Required<ExecuteTimings>): void {
    if (!this.traceCompute) return;
    for (const e of entries) if (e.request.trace) reportCompute(e.request.trace, startUs * 1000, timings);
  }

  /** Success statistics of one entry: once per request it carries (pipeline batches carry several). */
  private succeeded(entry: Entry, totalNs: number, t: Required<ExecuteTimings>): void {
    const carried = entry.request.carried;
    if (!carried) this.stats.requestSucceeded(totalNs, { queueNs: entry.queueNs, ...t, batchSize: entry.batchSize });
    else for (const c of carried) this.stats.requestSucceeded(totalNs + c.priorQueueNs, { queueNs: entry.queueNs + c.priorQueueNs, ...t });
  }

  private failed(request: InferRequest, totalNs: number, reason: FailureReason, dequeued: boolean): void {
    const carried = request.carried;
    if (!carried) this.stats.requestFailed(totalNs, reason, dequeued);
    else for (const c of carried) this.stats.requestFailed(totalNs + c.priorQueueNs, reason, dequeued);
  }

  private failedBeforeQueue(request: InferRequest, reason: FailureReason): void {
    this.failed(request, 0, reason, false);
  }

  private recordExecution(batchSize: number, startUs: number, reported?: ExecuteTimings): Required<ExecuteTimings> {
    const timings = timingsOf(reported, (this.clock.nowUs() - startUs) * 1000);
    this.stats.execution(batchSize, timings);
    return timings;
  }

  /** A bug or a throwing StatsRecorder while handling results: log, answer whoever is still waiting. */
  private internalError(entries: readonly Entry[], err: unknown): void {
    const error = InferError.from(err);
    this.log.error(`model '${this.opts.modelName}': scheduler error while finishing a batch: ${error.message}`);
    for (const e of entries) this.finish(e, error, 'OTHER');
  }

  private failBatch(entries: readonly Entry[], error: InferError, reason: FailureReason): void {
    for (const e of entries) this.finish(e, error, reason);
  }

  // ---- completion ------------------------------------------------------------------------

  /**
   * Answers an entry once. Success statistics use `timings`, or are left to the caller with
   * `'later'` (decoupled: the call's timings are not known yet). Returns the entry's total time,
   * or undefined when it was already answered.
   */
  private finish(entry: Entry, outcome: Outcome, reason?: FailureReason, timings?: Required<ExecuteTimings> | 'later'): number | undefined {
    if (entry.state === 'done') return undefined;
    const dequeued = entry.state !== 'queued';
    entry.state = 'done';
    entry.timer?.cancel();
    entry.timer = undefined;
    entry.unlisten?.();
    if (entry.holds) this.cycles.release(entry.holds);
    const nowUs = this.clock.nowUs();
    const totalNs = (nowUs - entry.arrivalUs) * 1000;
    if (reason) this.failed(entry.request, totalNs, reason, dequeued);
    else if (timings !== 'later') {
      const t = timings ?? { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 };
      this.succeeded(entry, totalNs, t);
      entry.request.computeSink?.add(t);
      if (!this.decoupled) this.stats.firstResponse?.(totalNs);
    }
    if (dequeued && entry.responseStartUs !== undefined) {
      for (let i = weightOf(entry.request); i > 0; i--) this.lastResponse(entry, reason, timings, nowUs - entry.responseStartUs);
    }
    entry.settled = true;
    if (this.opts.preserveOrdering && reason !== 'CANCELED') {
      entry.held = outcome;
      this.flushOrdered();
    } else {
      this.safeDeliver(entry, outcome);
      if (this.opts.preserveOrdering) this.flushOrdered();
    }
    this.count--;
    if (this.count === 0 && this.drained) {
      const d = this.drained;
      this.drained = undefined;
      d();
    }
    return totalNs;
  }

  /**
   * Per-response statistics of how a request the model worked on ended: its one response (or error)
   * when the model is not decoupled; for a decoupled model, the error or cancellation that ended
   * the stream, or an empty response when it ended without any (its responses were counted as sent).
   */
  private lastResponse(entry: Entry, reason: FailureReason | undefined, timings: Required<ExecuteTimings> | 'later' | undefined, sinceStartUs: number): void {
    const record = this.stats.response;
    if (!record) return;
    const elapsedNs = Math.max(0, sinceStartUs) * 1000;
    const index = entry.responses;
    if (reason === 'CANCELED') record(index, 'cancel', { inferNs: elapsedNs, outputNs: 0 });
    else if (reason) record(index, 'fail', { inferNs: elapsedNs, outputNs: 0 });
    else if (this.decoupled) {
      if (index === 0) record(0, 'empty', { inferNs: elapsedNs, outputNs: 0 });
    } else {
      const t = timings && timings !== 'later' ? timings : undefined;
      record(0, 'success', t ? { inferNs: t.computeInputNs + t.computeInferNs, outputNs: t.computeOutputNs } : { inferNs: elapsedNs, outputNs: 0 });
    }
  }

  /** preserve_ordering: releases held outcomes in arrival order. Cancelled ones were released at once. */
  private flushOrdered(): void {
    while (this.orderHead < this.order.length) {
      const e = this.order[this.orderHead]!;
      if (!e.settled) break;
      this.orderHead++;
      if (!e.delivered) this.safeDeliver(e, e.held as Outcome);
      e.held = undefined;
    }
    if (this.orderHead > 1024 && this.orderHead * 2 > this.order.length) {
      this.order.splice(0, this.orderHead);
      this.orderHead = 0;
    } else if (this.orderHead === this.order.length) {
      this.order.length = 0;
      this.orderHead = 0;
    }
  }

  private safeDeliver(entry: Entry, outcome: Outcome): void {
    if (entry.delivered) return;
    entry.delivered = true;
    try {
      entry.deliver(outcome);
    } catch (err) {
      this.log.error(`model '${this.opts.modelName}': response callback threw: ${InferError.from(err).message}`);
    }
  }
}

function timingsOf(t: ExecuteTimings | undefined, elapsedNs: number): Required<ExecuteTimings> {
  if (t && (t.computeInputNs !== undefined || t.computeInferNs !== undefined || t.computeOutputNs !== undefined)) {
    return { computeInputNs: t.computeInputNs ?? 0, computeInferNs: t.computeInferNs ?? 0, computeOutputNs: t.computeOutputNs ?? 0 };
  }
  return { computeInputNs: 0, computeInferNs: elapsedNs, computeOutputNs: 0 };
}

/** How many requests an entry stands for in the statistics (a pipeline batch counts each it carries). */
function weightOf(request: InferRequest): number {
  return request.carried?.length ?? 1;
}
