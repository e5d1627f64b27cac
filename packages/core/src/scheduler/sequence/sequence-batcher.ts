/**
 * Triton's sequence batcher (core `sequence_batch_scheduler.cc`, docs/triton-compatibility.md §4): stateful models.
 * Every request names a sequence (`sequence_id`, with `sequence_start` on its first request and
 * `sequence_end` on its last). A starting sequence takes a free slot (each instance has
 * max(1, max_batch_size) slots, or `oldest.max_candidate_sequences`), or waits in the backlog until
 * one frees; all its requests then go to that slot, in order, with the START / END / READY /
 * CORRID control inputs set, and the model's implicit state carried from one request to the next.
 *
 * - `direct` (default): an instance's batch holds one row per slot, slots 0..highest-active, so a
 *   sequence always occupies the same batch row; a slot with nothing ready gets a filler row (a copy
 *   of a ready request with READY false, its result discarded). `max_queue_delay_microseconds` with
 *   `minimum_slot_utilization` lets a batch wait for more ready slots.
 * - `oldest`: each slot offers its next request (one in flight per sequence); an instance batches
 *   the offered requests by the dynamic batcher's formation (preferred sizes, max queue delay).
 *
 * A sequence idle for `max_sequence_idle_microseconds` is released (its slot goes to the backlog or
 * back to the free slots); a later request of it, like any request of an unknown or ended sequence
 * without START, fails with Triton's message. Cancelling a queued request cancels its sequence.
 * A failed execution fails its requests, never re-run (re-running a stateful request would apply it
 * twice): no poison bisection here, and no re-run after a crash either (the dynamic batcher's
 * crash-retry.ts): the crash also lost the state the model held for every sequence of that instance,
 * so a re-run would compute from state that is gone. The crashed batch's requests fail with the crash.
 *
 * This file admits requests and drives each instance's batches; sequence-slots.ts assigns slots and
 * keeps the backlog, direct-batch.ts forms a direct batch, sequence-runner.ts runs one, and
 * idle-sequences.ts releases idle sequences. Answering is batch-answers.ts (shared with the dynamic
 * batcher).
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import { silentLogger, type Logger } from '../../logger.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../../types.ts';
import { onAbort } from '../abort-listeners.ts';
import { BatchAnswers, CANCELLED_MESSAGE, type Deliver } from '../batch-answers.ts';
import { formBatch } from '../batch-formation.ts';
import { shapeKeyFor } from '../batcher-options.ts';
import { CallCycleGuard } from '../call-cycles.ts';
import { EarliestTimer } from '../earliest-timer.ts';
import { guardedStats } from '../guarded-stats.ts';
import { RequestQueue } from '../request-queue.ts';
import { systemClock, type Clock, type Scheduler } from '../scheduler.ts';
import { nullStatsRecorder, type FailureReason, type StatsRecorder } from '../stats-recorder.ts';
import { SequenceControls } from './controls.ts';
import { formatCorrelationId } from './correlation-id.ts';
import { formDirectBatch } from './direct-batch.ts';
import { IdleSequences, type IdleOutcome } from './idle-sequences.ts';
import { ImplicitState } from './implicit-state.ts';
import { RELEASE, type Entry, type Row, type Runner, type Slot } from './sequence-entry.ts';
import { sequenceOptions, type SequenceBatcherDeps, type SequenceOptions } from './sequence-options.ts';

export type { SequenceBatcherDeps } from './sequence-options.ts';
import { SequenceRows } from './sequence-rows.ts';
import { checkSequenceRequest, type SequenceRequest } from './sequence-request.ts';
import { runSequenceBatch } from './sequence-runner.ts';
import { SequenceSlots } from './sequence-slots.ts';

export class SequenceBatcher implements Scheduler {
  private readonly model: string;
  private readonly version: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly stats: StatsRecorder;
  private readonly decoupled: boolean;
  private readonly config: ModelConfig;
  private readonly controls: SequenceControls;
  private readonly state: ImplicitState;
  private readonly opts: SequenceOptions;
  private readonly rows: SequenceRows;
  private readonly runners: Runner[];
  private readonly cycles: CallCycleGuard;
  private readonly shapeKey: (r: InferRequest) => string;
  private readonly slots: SequenceSlots;
  private readonly answers: BatchAnswers<Entry>;
  /** Releases the slots of idle sequences. */
  private readonly idleSequences: IdleSequences;
  private stopped = false;

  constructor(config: ModelConfig, version: number, deps: SequenceBatcherDeps) {
    this.config = config;
    this.model = config.name;
    this.version = version;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log ?? silentLogger;
    this.stats = deps.stats ? guardedStats(deps.stats, this.log, config.name) : nullStatsRecorder;
    this.decoupled = !!deps.decoupled;
    this.controls = new SequenceControls(config);
    this.state = new ImplicitState(config, deps.initialStates ?? new Map());
    if (this.state.active && this.decoupled) {
      throw new InferError('UNSUPPORTED', `model '${config.name}': implicit state (sequence_batching.state) is not supported for decoupled models`);
    }
    this.opts = sequenceOptions(config);
    this.idleSequences = new IdleSequences(this.clock, this.opts.idleUs, (corr) => this.idle(corr));
    this.rows = new SequenceRows(this.controls, this.state);
    this.shapeKey = shapeKeyFor(config, new Map());
    this.cycles = new CallCycleGuard(config.name, deps.instances.length);
    this.answers = new BatchAnswers<Entry>({
      model: config.name,
      clock: this.clock,
      stats: this.stats,
      log: this.log,
      decoupled: this.decoupled,
      cycles: this.cycles,
      accept: (request, deliver, sink) => this.accept(request, deliver, sink),
      answered: (entry) => this.answered(entry),
      drained: () => this.quiesce(),
    });
    this.runners = deps.instances.map((instance, index) => {
      const runner: Runner = {
        index,
        instance,
        slots: [],
        context: { callers: [this.cycles.frames[index]!] },
        busy: false,
        pumping: false,
        repump: false,
        maxActive: -1,
        offered: new RequestQueue<Entry>(1),
        timer: new EarliestTimer(this.clock, () => this.pump(runner)),
      };
      for (let s = 0; s < this.opts.slotsPerInstance; s++) runner.slots.push({ runner, index: s, queue: [], corr: undefined, values: undefined, inFlight: undefined });
      return runner;
    });
    this.slots = new SequenceSlots({
      clock: this.clock,
      slotsPerInstance: this.opts.slotsPerInstance,
      runners: this.runners,
      fail: (entry, error, reason) => this.answers.finish(entry, error, reason),
      changed: (slot) => this.slotChanged(slot),
    });
  }

  get inflight(): number {
    return this.answers.inflight;
  }

  /** Sequences holding a slot, and sequences waiting in the backlog (for tests and diagnostics). */
  get sequences(): { active: number; backlogged: number } {
    return this.slots.counts;
  }

  enqueue(request: InferRequest): Promise<InferResponse> {
    return this.answers.unary(request);
  }

  enqueueStream(request: InferRequest, sink: ResponseSink): void {
    this.answers.stream(request, sink);
  }

  stop(): Promise<void> {
    this.stopped = true;
    return this.answers.drain();
  }

  // ---- admission -------------------------------------------------------------------------

  private refuse(request: InferRequest, deliver: Deliver, error: InferError, reason: FailureReason = 'OTHER'): void {
    this.answers.refuse(request, deliver, error, reason);
  }

  private accept(request: InferRequest, deliver: Deliver, sink?: ResponseSink): void {
    if (this.runners.length === 0) {
      deliver(new InferError('UNAVAILABLE', `model '${this.model}' version ${this.version} has no instances to run requests`));
      return;
    }
    if (request.signal?.aborted) return this.refuse(request, deliver, new InferError('CANCELLED', CANCELLED_MESSAGE), 'CANCELED');
    let checked: SequenceRequest;
    try {
      checked = checkSequenceRequest(request, this.config, this.controls, this.shapeKey);
    } catch (e) {
      return this.refuse(request, deliver, InferError.from(e));
    }
    const { key, id, corr, start, end } = checked;
    if (this.stopped && start) {
      return this.refuse(request, deliver, new InferError('UNAVAILABLE', 'Server is stopping, scheduler for model has stopped accepting new inference requests'));
    }
    const known = this.slots.known(corr);
    if (!start && !known) {
      return this.refuse(
        request,
        deliver,
        new InferError(
          'INVALID_ARG',
          `inference request for sequence ${formatCorrelationId(id)} to model '${this.model}' must specify the START flag on the first request of the sequence`,
        ),
      );
    }
    let holds: Entry['holds'];
    try {
      holds = this.cycles.admit(request);
    } catch (e) {
      return this.refuse(request, deliver, InferError.from(e));
    }
    const now = this.clock.nowUs();
    this.idleSequences.seen(corr, now);
    if (start && known) {
      this.log.warn(
        `sequence ${formatCorrelationId(id)} for model '${this.model}' has a conflict. The previous sequence did not end before this sequence start. Previous sequence will be terminated early.`,
      );
    }
    const entry: Entry = {
      request,
      corr,
      id,
      start,
      end,
      deliver,
      ...(sink ? { sink } : {}),
      batchSize: 1,
      key,
      arrivalUs: now,
      level: 0,
      lane: undefined,
      state: 'queued',
      queueNs: 0,
      responses: 0,
      ...(holds ? { holds } : {}),
    };
    this.answers.admitted(entry);
    if (request.signal) entry.unlisten = onAbort(request.signal, () => this.cancel(entry));
    this.slots.route(entry, now);
  }

  /** Something changed in `slot` (a request arrived, a sequence moved in): let its instance act. */
  private slotChanged(slot: Slot): void {
    const runner = slot.runner;
    if (slot.queue.length > 0 || slot.corr !== undefined) runner.maxActive = Math.max(runner.maxActive, slot.index);
    if (this.opts.strategy === 'oldest') this.offerNext(slot);
    this.pump(runner);
  }

  /** Oldest: when the slot has nothing in flight, offers its next request to its instance. */
  private offerNext(slot: Slot): void {
    while (!slot.inFlight && slot.queue.length > 0) {
      const item = slot.queue.shift()!;
      if (item === RELEASE) {
        this.slots.release(slot);
        continue;
      }
      item.row = this.rows.prepare(item, slot);
      item.where = undefined;
      item.slot = slot;
      slot.inFlight = item;
      slot.runner.offered.push(item);
      // The END request is issued: the slot can take the next sequence, which waits for this one.
      if (item.end) this.slots.release(slot);
      return;
    }
  }

  // ---- batch formation -------------------------------------------------------------------

  private pump(runner: Runner): void {
    if (runner.pumping) {
      runner.repump = true;
      return;
    }
    runner.pumping = true;
    try {
      do {
        runner.repump = false;
        if (runner.busy) break;
        if (this.opts.strategy === 'direct') this.pumpDirect(runner);
        else this.pumpOldest(runner);
      } while (runner.repump);
    } finally {
      runner.pumping = false;
    }
  }

  private pumpDirect(runner: Runner): void {
    const now = this.clock.nowUs();
    const batch = formDirectBatch(runner, now, {
      delayUs: this.opts.directDelayUs,
      minUtilization: this.opts.minUtilization,
      slotsPerBatch: Math.max(1, this.config.max_batch_size),
      stopping: this.stopped,
      rows: this.rows,
      release: (slot) => this.slots.release(slot),
    });
    if (!batch) return;
    if ('waitUntilUs' in batch) runner.timer.armAt(batch.waitUntilUs);
    else this.dispatch(runner, batch, now);
  }

  private pumpOldest(runner: Runner): void {
    if (runner.offered.size === 0) return;
    const now = this.clock.nowUs();
    const decision = formBatch(runner.offered, this.opts.formation, now);
    if (decision.waitUs > 0 && !this.stopped) {
      runner.timer.armAt(now + decision.waitUs);
      return;
    }
    for (const e of decision.entries) runner.offered.remove(e);
    this.dispatch(
      runner,
      decision.entries.map((e) => ({ request: e.row!, entry: e })),
      now,
    );
  }

  // ---- execution -------------------------------------------------------------------------

  private dispatch(runner: Runner, rows: Row[], now: number): void {
    runSequenceBatch(runner, rows, now, { answers: this.answers, decoupled: this.decoupled, state: this.state, done: () => this.pump(runner) });
  }

  // ---- cancellation, idle sequences ------------------------------------------------------

  private cancel(entry: Entry): void {
    if (entry.state === 'done') return;
    const cancelled = new InferError('CANCELLED', CANCELLED_MESSAGE);
    if (entry.state === 'running') {
      const running = entry.running;
      this.answers.finish(entry, cancelled, 'CANCELED');
      running?.answeredEarly();
      return;
    }
    // A queued request of a sequence is cancelled: the sequence is (Triton ends it at that request).
    this.idleSequences.forget(entry.corr);
    const offeredBy = entry.slot;
    if (offeredBy) {
      offeredBy.runner.offered.remove(entry);
      // Its successors go with it; then finish() frees the slot's turn for whoever comes next.
      if (offeredBy.corr === entry.corr) this.slots.release(offeredBy);
      this.answers.finish(entry, cancelled, 'CANCELED');
      return;
    }
    const where = entry.where;
    if (where && 'runner' in where) {
      const i = where.queue.indexOf(entry);
      if (i >= 0) where.queue.splice(i, 1);
      this.answers.finish(entry, cancelled, 'CANCELED');
      if (where.corr === entry.corr) this.slots.release(where);
      return;
    }
    if (where) this.slots.cancelBacklog(where, cancelled);
  }

  /** Sequence `corr` is idle past max_sequence_idle_microseconds (idle-sequences.ts): it gives up its slot. */
  private idle(corr: string): IdleOutcome {
    const slot = this.slots.takeAway(corr);
    if (!slot) return this.slots.backlogged(corr) ? 'waiting' : 'gone';
    this.log.verbose(1, `model '${this.model}': sequence ${corr.slice(2)} idle for more than ${this.opts.idleUs} us: releasing its slot`);
    slot.queue.push(RELEASE);
    if (this.opts.strategy === 'oldest') this.offerNext(slot);
    this.pump(slot.runner);
    return 'released';
  }

  // ---- completion ------------------------------------------------------------------------

  /** An answered request of an oldest slot: the slot's next request may go now. */
  private answered(entry: Entry): void {
    const slot = entry.slot;
    if (!slot) return;
    entry.slot = undefined;
    if (slot.inFlight === entry) {
      slot.inFlight = undefined;
      this.offerNext(slot);
      this.pump(slot.runner);
    }
  }

  /** Nothing in flight after stop(): no timer may keep the process alive. */
  private quiesce(): void {
    this.idleSequences.stop();
    for (const r of this.runners) r.timer.cancel();
  }
}
