/**
 * Which slot each sequence holds, the free slots, and the sequences waiting for one (the backlog):
 * a starting sequence takes a free slot in Triton's order, or waits in the backlog until a slot's
 * sequence ends; all its requests then go to that slot, in order.
 */
import { InferError } from '../../errors.ts';
import type { FailureReason } from '../stats-recorder.ts';
import type { Clock } from '../scheduler.ts';
import { CANCELLED_MESSAGE } from '../batch-answers.ts';
import { FreeSlots } from './free-slots.ts';
import { RELEASE, type Backlog, type Entry, type Runner, type Slot } from './sequence-entry.ts';

export interface SequenceSlotsDeps {
  readonly clock: Clock;
  readonly slotsPerInstance: number;
  readonly runners: readonly Runner[];
  /** Answers a request that will not run (its sequence was cut short, or its backlog wait expired). */
  readonly fail: (entry: Entry, error: InferError, reason: FailureReason) => void;
  /** Something changed in `slot` (a request arrived, a sequence moved in): let its instance act. */
  readonly changed: (slot: Slot) => void;
}

export class SequenceSlots {
  private readonly free: FreeSlots;
  private readonly bySequence = new Map<string, Slot>();
  private readonly backlogBySequence = new Map<string, Backlog>();
  private readonly backlogs: Backlog[] = [];

  constructor(private readonly deps: SequenceSlotsDeps) {
    this.free = new FreeSlots(deps.slotsPerInstance, deps.runners);
  }

  /** Sequences holding a slot, and sequences waiting in the backlog. */
  get counts(): { active: number; backlogged: number } {
    return { active: this.bySequence.size, backlogged: this.backlogs.filter((b) => b.queue.length > 0).length };
  }

  /** Whether sequence `corr` holds a slot or waits for one (a request without START needs it to). */
  known(corr: string): boolean {
    return this.bySequence.has(corr) || this.backlogBySequence.has(corr);
  }

  /** Whether sequence `corr` waits in the backlog. */
  backlogged(corr: string): boolean {
    return this.backlogBySequence.has(corr);
  }

  /** Queues an accepted request: in its sequence's slot or backlog, else a free slot, else a new backlog. */
  route(entry: Entry, now: number): void {
    const { corr, end } = entry;
    const slot = this.bySequence.get(corr);
    if (slot) {
      if (end) this.bySequence.delete(corr);
      this.toSlot(slot, entry);
      return;
    }
    const backlog = this.backlogBySequence.get(corr);
    if (backlog) {
      this.toBacklog(backlog, entry, now);
      if (end) this.backlogBySequence.delete(corr);
      return;
    }
    const free = this.free.take();
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

  /** The idle reaper took the slot of sequence `corr` away; returns it (undefined when it held none). */
  takeAway(corr: string): Slot | undefined {
    const slot = this.bySequence.get(corr);
    if (slot) this.bySequence.delete(corr);
    return slot;
  }

  /**
   * The slot's sequence is over (END taken, idle, cancelled): anything still queued in it is
   * cancelled, then the oldest backlogged sequence moves in, or the slot becomes free.
   */
  release(slot: Slot): void {
    for (const item of slot.queue.splice(0)) if (item !== RELEASE) this.deps.fail(item, new InferError('CANCELLED', CANCELLED_MESSAGE), 'CANCELED');
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
      this.deps.changed(slot);
      return;
    }
    this.free.put(slot);
  }

  /** A request of a backlogged sequence was cancelled: the whole sequence is; its slot turn is skipped. */
  cancelBacklog(backlog: Backlog, error: InferError): void {
    if (this.backlogBySequence.get(backlog.corr) === backlog) this.backlogBySequence.delete(backlog.corr);
    backlog.timer?.cancel();
    for (const e of backlog.queue.splice(0)) this.deps.fail(e, error, 'CANCELED');
  }

  private toSlot(slot: Slot, entry: Entry): void {
    entry.where = slot;
    slot.queue.push(entry);
    this.deps.changed(slot);
  }

  /** A request joins a backlogged sequence; its `timeout` bounds how long the sequence may wait for a slot. */
  private toBacklog(backlog: Backlog, entry: Entry, now: number): void {
    entry.where = backlog;
    backlog.queue.push(entry);
    const timeout = entry.request.timeoutUs ?? 0;
    if (timeout > 0 && now + timeout < backlog.expiresAt) {
      backlog.expiresAt = now + timeout;
      backlog.timer?.cancel();
      backlog.timer = this.deps.clock.setTimer(timeout, () => this.expire(backlog));
    }
  }

  private expire(backlog: Backlog): void {
    backlog.timer = undefined;
    const i = this.backlogs.indexOf(backlog);
    if (i < 0) return;
    this.backlogs.splice(i, 1);
    if (this.backlogBySequence.get(backlog.corr) === backlog) this.backlogBySequence.delete(backlog.corr);
    const error = new InferError('UNAVAILABLE', 'timeout of the corresponding sequence has been expired');
    for (const e of backlog.queue.splice(0)) this.deps.fail(e, error, 'REJECTED');
  }
}
