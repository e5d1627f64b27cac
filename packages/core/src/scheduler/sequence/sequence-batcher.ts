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
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import { toNumber } from '../../config/model-config.ts';
import type { ExecuteContext, ExecuteOutput, ModelInstance } from '../../backend/spi.ts';
import { silentLogger, type Logger } from '../../logger.ts';
import { batchSizeOf } from '../../tensor/batch.ts';
import type { CorrelationId, InferRequest, InferResponse, ResponseSink } from '../../types.ts';
import { shapeKeyFor } from '../batcher-options.ts';
import { formBatch, type Candidate, type FormationRules } from '../batch-formation.ts';
import { BatchAnswers, CANCELLED_MESSAGE, type AnsweredRequest, type Deliver } from '../batch-answers.ts';
import { Execution } from '../execution.ts';
import { CallCycleGuard, executionContext } from '../call-cycles.ts';
import { guardedStats } from '../guarded-stats.ts';
import { RequestQueue } from '../request-queue.ts';
import { systemClock, type Clock, type Scheduler } from '../scheduler.ts';
import { nullStatsRecorder, type FailureReason, type StatsRecorder } from '../stats-recorder.ts';
import { correlationKey, formatCorrelationId, inSequence } from './correlation-id.ts';
import { SequenceControls } from './controls.ts';
import { onAbort } from '../abort-listeners.ts';
import { EarliestTimer } from '../earliest-timer.ts';
import { ImplicitState, type InitialStateData, type SequenceStateValues } from './implicit-state.ts';

export interface SequenceBatcherDeps {
  readonly instances: readonly ModelInstance[];
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
  readonly log?: Logger;
  /** Decoupled model: executions go through `executeDecoupled`. */
  readonly decoupled?: boolean;
  /** Loaded `initial_state` data by state input name (see loadInitialStates). */
  readonly initialStates?: ReadonlyMap<string, InitialStateData>;
}

/** Placed in a slot's queue by the idle reaper: release the slot once what is before it ran. */
const RELEASE = Symbol('release idle sequence');

interface Entry extends Candidate, AnsweredRequest {
  readonly corr: string;
  readonly id: CorrelationId;
  readonly start: boolean;
  readonly end: boolean;
  /** Never `retry`: a request of a crashed batch is not re-run (see above). */
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

interface Backlog {
  readonly corr: string;
  readonly queue: Entry[];
  expiresAt: number;
  timer?: { cancel(): void };
}

interface Slot {
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

interface Runner {
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
interface Row {
  readonly request: InferRequest;
  readonly entry?: Entry;
}

/** Triton's ready-slot order: the lowest slot index first, instances in order on ties. */
function slotBefore(a: Slot, b: Slot): boolean {
  return a.index !== b.index ? a.index < b.index : a.runner.index < b.runner.index;
}

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
  private readonly strategy: 'direct' | 'oldest';
  private readonly runners: Runner[];
  private readonly cycles: CallCycleGuard;
  private readonly shapeKey: (r: InferRequest) => string;
  private readonly idleUs: number;
  /** Direct: batch delay and the share of slots that must be ready to send before it. */
  private readonly directDelayUs: number;
  private readonly minUtilization: number;
  private readonly slotsPerInstance: number;
  private readonly formation: FormationRules;
  /** Free slots (a binary heap in Triton's order). */
  private readonly ready: Slot[] = [];
  private readonly bySequence = new Map<string, Slot>();
  private readonly backlogBySequence = new Map<string, Backlog>();
  private readonly backlogs: Backlog[] = [];
  /** Last request arrival per sequence (the idle reaper's input). */
  private readonly lastSeen = new Map<string, number>();
  private readonly answers: BatchAnswers<Entry>;
  /** Releases idle sequences (`reap`). */
  private readonly reaper: EarliestTimer;
  private stopped = false;

  constructor(config: ModelConfig, version: number, deps: SequenceBatcherDeps) {
    const sb = config.sequence_batching!;
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
    if (sb.iterative_sequence) {
      throw new InferError('UNSUPPORTED', `model '${config.name}': sequence_batching.iterative_sequence (request rescheduling) is not supported by Tritium`);
    }
    this.strategy = sb.oldest ? 'oldest' : 'direct';
    this.idleUs = Math.max(1, toNumber(sb.max_sequence_idle_microseconds ?? 1_000_000));
    this.directDelayUs = toNumber(sb.direct?.max_queue_delay_microseconds ?? 0);
    this.minUtilization = sb.direct?.minimum_slot_utilization ?? 0;
    const maxBatch = Math.max(1, config.max_batch_size);
    this.slotsPerInstance = sb.oldest && sb.oldest.max_candidate_sequences > 0 ? sb.oldest.max_candidate_sequences : maxBatch;
    const preferred = [...(sb.oldest?.preferred_batch_size ?? [])].filter((n) => n > 0).sort((a, b) => a - b);
    this.formation = {
      batching: config.max_batch_size > 0,
      maxBatchSize: config.max_batch_size,
      maxPreferred: preferred.length > 0 ? Math.max(...preferred) : maxBatch,
      preferred: new Set(preferred),
      maxQueueDelayUs: toNumber(sb.oldest?.max_queue_delay_microseconds ?? 0),
      preserveOrdering: !!sb.oldest?.preserve_ordering,
    };
    this.shapeKey = shapeKeyFor(config, new Map());
    this.cycles = new CallCycleGuard(config.name, deps.instances.length);
    this.reaper = new EarliestTimer(this.clock, () => this.reap());
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
      for (let s = 0; s < this.slotsPerInstance; s++) runner.slots.push({ runner, index: s, queue: [], corr: undefined, values: undefined, inFlight: undefined });
      return runner;
    });
    for (let s = 0; s < this.slotsPerInstance; s++) for (const r of this.runners) this.ready.push(r.slots[s]!); // already in heap order
  }

  get inflight(): number {
    return this.answers.inflight;
  }

  /** Sequences holding a slot, and sequences waiting in the backlog (for tests and diagnostics). */
  get sequences(): { active: number; backlogged: number } {
    return { active: this.bySequence.size, backlogged: this.backlogs.filter((b) => b.queue.length > 0).length };
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
    let key: string;
    try {
      if (batchSizeOf(request, this.config) > 1) {
        throw new InferError('INVALID_ARG', `inference request to model '${this.model}' must specify batch-size 1 due to requirements of sequence batcher`);
      }
      key = this.shapeKey(request);
    } catch (e) {
      return this.refuse(request, deliver, InferError.from(e, 'INVALID_ARG'));
    }
    const seq = request.sequence;
    const id = seq?.id;
    if (!inSequence(id)) {
      return this.refuse(request, deliver, new InferError('INVALID_ARG', `inference request to model '${this.model}' must specify a non-zero or non-empty correlation ID`));
    }
    try {
      this.controls.checkRequest(request, id);
    } catch (e) {
      return this.refuse(request, deliver, InferError.from(e));
    }
    const start = seq!.start === true;
    const end = seq!.end === true;
    if (this.stopped && start) {
      return this.refuse(request, deliver, new InferError('UNAVAILABLE', 'Server is stopping, scheduler for model has stopped accepting new inference requests'));
    }
    const corr = correlationKey(id);
    const slot = this.bySequence.get(corr);
    const backlog = this.backlogBySequence.get(corr);
    if (!start && !slot && !backlog) {
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
    this.lastSeen.set(corr, now);
    this.reaper.armAt(now + this.idleUs);
    if (start && (slot || backlog)) {
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
    if (slot) {
      if (end) this.bySequence.delete(corr);
      this.toSlot(slot, entry);
      return;
    }
    if (backlog) {
      this.toBacklog(backlog, entry, now);
      if (end) this.backlogBySequence.delete(corr);
      return;
    }
    const free = this.takeReadySlot();
    if (free) {
      free.corr = corr;
      if (!end) this.bySequence.set(corr, free);
      this.toSlot(free, entry);
      return;
    }
    const fresh: Backlog = { corr, queue: [], expiresAt: Number.POSITIVE_INFINITY };
    this.backlogs.push(fresh);
    if (!end) this.backlogBySequence.set(corr, fresh);
    this.toBacklog(fresh, entry, now);
  }

  private toSlot(slot: Slot, entry: Entry): void {
    entry.where = slot;
    slot.queue.push(entry);
    this.slotChanged(slot);
  }

  /** A request joins a backlogged sequence; its `timeout` bounds how long the sequence may wait for a slot. */
  private toBacklog(backlog: Backlog, entry: Entry, now: number): void {
    entry.where = backlog;
    backlog.queue.push(entry);
    const timeout = entry.request.timeoutUs ?? 0;
    if (timeout > 0 && now + timeout < backlog.expiresAt) {
      backlog.expiresAt = now + timeout;
      backlog.timer?.cancel();
      backlog.timer = this.clock.setTimer(timeout, () => this.expireBacklog(backlog));
    }
  }

  private expireBacklog(backlog: Backlog): void {
    backlog.timer = undefined;
    const i = this.backlogs.indexOf(backlog);
    if (i < 0) return;
    this.backlogs.splice(i, 1);
    if (this.backlogBySequence.get(backlog.corr) === backlog) this.backlogBySequence.delete(backlog.corr);
    const error = new InferError('UNAVAILABLE', 'timeout of the corresponding sequence has been expired');
    for (const e of backlog.queue.splice(0)) this.answers.finish(e, error, 'REJECTED');
  }

  // ---- slots -----------------------------------------------------------------------------

  private takeReadySlot(): Slot | undefined {
    const heap = this.ready;
    if (heap.length === 0) return undefined;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && slotBefore(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && slotBefore(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }

  private putReadySlot(slot: Slot): void {
    const heap = this.ready;
    heap.push(slot);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!slotBefore(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  }

  /**
   * The slot's sequence is over (END taken, idle, cancelled): anything still queued in it is
   * cancelled, then the oldest backlogged sequence moves in, or the slot becomes free.
   */
  private releaseSlot(slot: Slot): void {
    for (const item of slot.queue.splice(0)) if (item !== RELEASE) this.answers.finish(item, new InferError('CANCELLED', CANCELLED_MESSAGE), 'CANCELED');
    if (slot.corr !== undefined && this.bySequence.get(slot.corr) === slot) this.bySequence.delete(slot.corr);
    slot.corr = undefined;
    slot.values = undefined;
    while (this.backlogs.length > 0) {
      const backlog = this.backlogs.shift()!;
      backlog.timer?.cancel();
      backlog.timer = undefined;
      if (backlog.queue.length === 0) continue;
      // A backlog whose last request is not END is still collecting: its later requests go to the slot.
      if (!backlog.queue[backlog.queue.length - 1]!.end) {
        if (this.backlogBySequence.get(backlog.corr) === backlog) this.backlogBySequence.delete(backlog.corr);
        this.bySequence.set(backlog.corr, slot);
      }
      slot.corr = backlog.corr;
      for (const e of backlog.queue) {
        e.where = slot;
        slot.queue.push(e);
      }
      this.slotChanged(slot);
      return;
    }
    this.putReadySlot(slot);
  }

  /** Something changed in `slot` (a request arrived, a sequence moved in): let its instance act. */
  private slotChanged(slot: Slot): void {
    const runner = slot.runner;
    if (slot.queue.length > 0 || slot.corr !== undefined) runner.maxActive = Math.max(runner.maxActive, slot.index);
    if (this.strategy === 'oldest') this.offerNext(slot);
    this.pump(runner);
  }

  /** Oldest: when the slot has nothing in flight, offers its next request to its instance. */
  private offerNext(slot: Slot): void {
    while (!slot.inFlight && slot.queue.length > 0) {
      const item = slot.queue.shift()!;
      if (item === RELEASE) {
        this.releaseSlot(slot);
        continue;
      }
      item.row = this.prepareRow(item, slot);
      item.where = undefined;
      item.slot = slot;
      slot.inFlight = item;
      slot.runner.offered.push(item);
      // The END request is issued: the slot can take the next sequence, which waits for this one.
      if (item.end) this.releaseSlot(slot);
      return;
    }
  }

  /** The request the model gets for `entry` in `slot`: its inputs, the controls, the sequence's state. */
  private prepareRow(entry: Entry, slot: Slot): InferRequest {
    if (this.state.active && (entry.start || !slot.values)) slot.values = this.state.fresh();
    entry.values = slot.values;
    const request = entry.request;
    const inputs = [...request.inputs, ...this.controls.tensors({ start: entry.start, end: entry.end, ready: true }, entry.id)];
    if (entry.values) inputs.push(...this.state.inputs(entry.values));
    const outputs = this.state.active ? this.state.requestedOutputs(request.outputs) : request.outputs;
    return { ...request, inputs, ...(outputs ? { outputs } : {}) };
  }

  /** Triton's null request: a ready request's inputs with READY false (and its state, read only). */
  private fillerRow(template: Entry, slot: Slot): InferRequest {
    const request = template.request;
    const inputs = [...request.inputs, ...this.controls.tensors({ start: false, end: false, ready: false }, undefined)];
    const values = template.values ?? slot.values ?? (this.state.active ? this.state.fresh() : undefined);
    if (values) inputs.push(...this.state.inputs(values));
    const outputs = this.state.active ? this.state.requestedOutputs(request.outputs) : request.outputs;
    return { id: request.id, model: request.model, ...(request.version !== undefined ? { version: request.version } : {}), inputs, ...(outputs ? { outputs } : {}) };
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
        if (this.strategy === 'direct') this.pumpDirect(runner);
        else this.pumpOldest(runner);
      } while (runner.repump);
    } finally {
      runner.pumping = false;
    }
  }

  private pumpDirect(runner: Runner): void {
    const now = this.clock.nowUs();
    let maxSlot = -1;
    let readyCount = 0;
    let earliest = Number.POSITIVE_INFINITY;
    let template: Entry | undefined;
    for (let i = 0; i <= runner.maxActive; i++) {
      const slot = runner.slots[i]!;
      // An idle sequence's release marker at the front: release the slot (a backlog may move in).
      while (slot.queue[0] === RELEASE) {
        slot.queue.shift();
        this.releaseSlot(slot);
      }
      const front = slot.queue[0];
      if (front === undefined) continue;
      template ??= front;
      readyCount++;
      maxSlot = i;
      earliest = Math.min(earliest, front.arrivalUs);
    }
    if (maxSlot < 0 || !template) {
      this.shrinkActive(runner);
      return;
    }
    if (this.directDelayUs > 0 && this.minUtilization > 0 && !this.stopped) {
      const age = now - earliest;
      const slots = Math.max(1, this.config.max_batch_size);
      if (!(age > this.directDelayUs || readyCount / slots >= this.minUtilization)) {
        runner.timer.armAt(earliest + this.directDelayUs + 1);
        return;
      }
    }
    const rows: Row[] = [];
    for (let i = 0; i <= maxSlot; i++) {
      const slot = runner.slots[i]!;
      const front = slot.queue[0];
      // A row must keep its slot's position: an empty slot, or one whose request cannot share
      // this batch's shapes, gets a filler row.
      if (front === undefined || front === RELEASE || front.key !== template.key) {
        rows.push({ request: this.fillerRow(template, slot) });
        continue;
      }
      slot.queue.shift();
      const request = this.prepareRow(front, slot);
      front.row = request;
      rows.push({ request, entry: front });
      if (front.end) this.releaseSlot(slot);
    }
    this.shrinkActive(runner);
    this.dispatch(runner, rows, now);
  }

  private shrinkActive(runner: Runner): void {
    while (runner.maxActive >= 0) {
      const s = runner.slots[runner.maxActive]!;
      if (s.corr !== undefined || s.queue.length > 0) break;
      runner.maxActive--;
    }
  }

  private pumpOldest(runner: Runner): void {
    if (runner.offered.size === 0) return;
    const now = this.clock.nowUs();
    const decision = formBatch(runner.offered, this.formation, now);
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
    const entries = rows.flatMap((r) => (r.entry ? [r.entry] : []));
    const running = new Execution(entries, false);
    for (const e of entries) {
      e.state = 'running';
      e.running = running;
      e.where = undefined;
      e.responseStartUs = now;
      this.answers.dequeued(e, now);
    }
    runner.busy = true;
    const signal = running.signal;
    const context = executionContext(runner.context, entries.map((e) => e.request));
    const run = this.decoupled ? this.runDecoupled(runner, rows, signal, context, now) : this.runBatch(runner, rows, entries, signal, context, now);
    run
      .catch((err: unknown) => this.answers.internalError(entries, err))
      .finally(() => {
        runner.busy = false;
        this.pump(runner);
      });
  }

  private async runBatch(runner: Runner, rows: readonly Row[], entries: readonly Entry[], signal: AbortSignal, context: ExecuteContext, startUs: number): Promise<void> {
    let output: ExecuteOutput;
    try {
      output = await runner.instance.execute(
        rows.map((r) => r.request),
        signal,
        context,
      );
    } catch (err) {
      this.answers.executed(entries, rows.length, startUs);
      this.answers.failAll(entries, InferError.from(err), 'BACKEND');
      return;
    }
    const timings = this.answers.executed(entries, rows.length, startUs, output?.timings);
    this.answers.answerEach(
      rows.map((r) => r.entry),
      output,
      (e, result) => {
        let response: InferResponse;
        try {
          response = e.values ? this.state.absorb(e.values, result, e.request.outputs) : result;
        } catch (err) {
          this.answers.finish(e, InferError.from(err), 'BACKEND');
          return;
        }
        this.answers.finish(e, response, undefined, timings);
      },
    );
  }

  private runDecoupled(runner: Runner, rows: readonly Row[], signal: AbortSignal, context: ExecuteContext, startUs: number): Promise<void> {
    return this.answers.runDecoupled(
      runner.instance,
      rows.map((r) => r.entry),
      rows.map((r) => r.request),
      { signal, context, startUs, batchSize: rows.length },
      (ran, error) => this.answers.failAll(ran, error, 'BACKEND'),
    );
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
    this.lastSeen.delete(entry.corr);
    const offeredBy = entry.slot;
    if (offeredBy) {
      offeredBy.runner.offered.remove(entry);
      // Its successors go with it; then finish() frees the slot's turn for whoever comes next.
      if (offeredBy.corr === entry.corr) this.releaseSlot(offeredBy);
      this.answers.finish(entry, cancelled, 'CANCELED');
      return;
    }
    const where = entry.where;
    if (where && 'runner' in where) {
      const i = where.queue.indexOf(entry);
      if (i >= 0) where.queue.splice(i, 1);
      this.answers.finish(entry, cancelled, 'CANCELED');
      if (where.corr === entry.corr) this.releaseSlot(where);
      return;
    }
    if (where) {
      // Backlogged: the whole backlogged sequence is cancelled; its slot turn is skipped.
      if (this.backlogBySequence.get(where.corr) === where) this.backlogBySequence.delete(where.corr);
      where.timer?.cancel();
      for (const e of where.queue.splice(0)) this.answers.finish(e, cancelled, 'CANCELED');
    }
  }

  /** Triton's reaper: a sequence idle past max_sequence_idle_microseconds gives up its slot. */
  private reap(): void {
    const now = this.clock.nowUs();
    let next = Number.POSITIVE_INFINITY;
    for (const [corr, seen] of this.lastSeen) {
      const due = seen + this.idleUs;
      if (due > now) {
        next = Math.min(next, due);
        continue;
      }
      const slot = this.bySequence.get(corr);
      if (slot) {
        this.log.verbose(1, `model '${this.model}': sequence ${corr.slice(2)} idle for more than ${this.idleUs} us: releasing its slot`);
        this.bySequence.delete(corr);
        this.lastSeen.delete(corr);
        slot.queue.push(RELEASE);
        if (this.strategy === 'oldest') this.offerNext(slot);
        this.pump(slot.runner);
      } else if (this.backlogBySequence.has(corr)) {
        // Still waiting for a slot: look again soon (Triton: every 50 ms).
        next = Math.min(next, now + 50_000);
      } else {
        this.lastSeen.delete(corr);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.reaper.armAt(next);
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
    this.reaper.cancel();
    for (const r of this.runners) r.timer.cancel();
  }
}
