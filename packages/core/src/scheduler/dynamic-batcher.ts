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
 * This file admits requests and forms batches; batch-runner.ts runs a formed batch, and
 * batch-answers.ts answers and records each request (shared with the sequence batcher).
 *
 * Concurrency: one batch in flight per instance; all instances run concurrently. Everything runs
 * on the caller's event loop; no locks. Every accepted request is answered exactly once.
 */
import { InferError } from '../errors.ts';
import { silentLogger, type Logger } from '../logger.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import { AdaptiveDelay } from './adaptive-delay.ts';
import { onAbort } from './abort-listeners.ts';
import { BatchAnswers, CANCELLED_MESSAGE, type Deliver } from './batch-answers.ts';
import { formBatch, formationRules, type FormationRules } from './batch-formation.ts';
import { headLengthGroup } from './head-length-group.ts';
import { HoldGate } from './batch-hold.ts';
import { BatchRunner, type DynamicEntry } from './batch-runner.ts';
import { queuePlacement, type BatcherDeps, type BatcherOptions } from './batcher-options.ts';
import { CallCycleGuard } from './call-cycles.ts';
import { CrashRetries } from './crash-retry.ts';
import { EarliestTimer } from './earliest-timer.ts';
import { guardedStats } from './guarded-stats.ts';
import { InstanceSlots, type InstanceSlot } from './instance-slots.ts';
import { RequestQueue } from './request-queue.ts';
import { systemClock, type Clock, type Scheduler } from './scheduler.ts';
import { nullStatsRecorder, type StatsRecorder } from './stats-recorder.ts';

export type { BatcherDeps } from './batcher-options.ts';

type Entry = DynamicEntry;

/** The dynamic batcher (also the direct scheduler when `options.batching` is false). */
export class DynamicBatcher implements Scheduler {
  private readonly opts: BatcherOptions;
  private readonly clock: Clock;
  private readonly stats: StatsRecorder;
  private readonly log: Logger;
  private readonly decoupled: boolean;
  private readonly answers: BatchAnswers<Entry>;
  private readonly slots: InstanceSlots;
  private readonly cycles: CallCycleGuard;
  private readonly queue: RequestQueue<Entry>;
  private readonly formation: FormationRules;
  /** Requests of crashed batches waiting to be re-run alone, served before the queue. */
  private readonly retries: CrashRetries<Entry>;
  private readonly runner: BatchRunner;
  /** Ends a queue delay or a hold. */
  private readonly delayTimer: EarliestTimer;
  private pumping = false;
  private repump = false;
  private stopped = false;
  /** Set with `tritium.batching: adaptive`. */
  private readonly adaptive: AdaptiveDelay | undefined;
  /** Set when a hold source was given (BatcherDeps.hold). */
  private readonly hold: HoldGate | undefined;

  constructor(options: BatcherOptions, deps: BatcherDeps) {
    this.opts = options;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log ?? silentLogger;
    this.stats = deps.stats ? guardedStats(deps.stats, this.log, options.modelName) : nullStatsRecorder;
    this.decoupled = !!deps.decoupled;
    this.adaptive = options.adaptive && options.batching && options.maxQueueDelayUs > 0 ? new AdaptiveDelay() : undefined;
    this.cycles = new CallCycleGuard(options.modelName, deps.instances.length);
    this.delayTimer = new EarliestTimer(this.clock, () => this.pump());
    this.retries = new CrashRetries<Entry>({
      model: options.modelName,
      version: options.version,
      clock: this.clock,
      stats: this.stats,
      log: this.log,
      fail: (e, error) => this.answers.finish(e, error, 'BACKEND'),
      expire: (e) => this.expire(e),
    });
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
    this.runner = new BatchRunner({ options, clock: this.clock, decoupled: this.decoupled, answers: this.answers, retries: this.retries, pump: () => this.pump() });
    this.slots = new InstanceSlots(deps.instances, this.cycles);
    this.queue = new RequestQueue<Entry>(options.levelCount);
    this.formation = formationRules(options);
    const holdBelow = options.preferredBatchSizes.length > 0 ? Math.min(...options.preferredBatchSizes) : options.maxBatchSize;
    this.hold = options.batching && deps.hold ? new HoldGate(deps.hold, holdBelow) : undefined;
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
    if (this.slots.all.length === 0) {
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
    const { level, policy, timeoutUs } = queuePlacement(o, request);
    if (policy.maxQueueSize > 0 && this.queue.sizeOf(level) >= policy.maxQueueSize) {
      if (holds) this.cycles.release(holds);
      // Under overload this answer is given thousands of times a second: keep it cheap (no stack).
      const full = InferError.quick('UNAVAILABLE', `${request.id ? `[request id: ${request.id}] ` : ''}Exceeds maximum queue size`);
      return this.answers.refuse(request, deliver, full, 'REJECTED');
    }

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
      this.retries.remove(entry);
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
    else if (entry.state === 'retry') this.retries.remove(entry);
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
          if (this.retries.size > 0) {
            const slot = this.slots.idle();
            if (!slot) break;
            this.dispatch(slot, [this.retries.take()!], this.clock.nowUs());
            continue;
          }
          if (this.queue.size === 0) break;
          const slot = this.slots.idle();
          if (!slot) break;
          const now = this.clock.nowUs();
          const decision = this.formBatch(now);
          // While stopping, nothing more will arrive: send what is queued without waiting.
          const waitUs = decision.waitUs > 0 && !this.stopped ? (this.adaptive ? this.adaptive.waitUs(now, decision.waitUs) : decision.waitUs) : 0;
          if (waitUs > 0) {
            this.delayTimer.armAt(now + waitUs);
            break;
          }
          if (this.held(now, decision.entries)) break;
          this.adaptive?.dispatched(now);
          this.dispatch(slot, this.opts.tokens ? headLengthGroup(decision.entries, this.opts.tokens, this.opts.maxBatchSize) : decision.entries, now);
        }
      } while (this.repump);
    } finally {
      this.pumping = false;
    }
  }

  /** Whether a ready batch waits out a hold (batch-hold.ts), arming the timer that ends it. */
  private held(now: number, entries: readonly Entry[]): boolean {
    if (!this.hold || this.stopped) return false;
    let size = 0;
    for (const e of entries) size += e.batchSize;
    const until = this.hold.holdUntil(now, size, entries[0]!.arrivalUs);
    if (until === undefined) return false;
    this.delayTimer.armAt(until);
    return true;
  }

  private formBatch(now: number): { entries: Entry[]; waitUs: number } {
    return formBatch(this.queue, this.formation, now);
  }

  /** Sends `entries` to run on `slot` (batch-runner.ts). */
  private dispatch(slot: InstanceSlot, entries: Entry[], now: number): void {
    for (const e of entries) this.queue.remove(e);
    this.runner.run(slot, entries, now);
  }
}
