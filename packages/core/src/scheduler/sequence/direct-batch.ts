import type { SequenceRows } from './sequence-rows.ts';
import { RELEASE, type Entry, type Row, type Runner, type Slot } from './sequence-entry.ts';

/** What forming a direct batch reads of its batcher. */
export interface DirectBatchRules {
  /** `direct.max_queue_delay_microseconds` and `minimum_slot_utilization`. */
  readonly delayUs: number;
  readonly minUtilization: number;
  /** Rows in a full batch: max(1, max_batch_size). */
  readonly slotsPerBatch: number;
  /** Stopping: send what is ready without waiting. */
  readonly stopping: boolean;
  readonly rows: SequenceRows;
  /** The slot's sequence is over (END taken, or an idle sequence's release marker reached). */
  readonly release: (slot: Slot) => void;
}

/**
 * The direct strategy's next batch of `runner`: one row per slot from 0 to the highest with a ready
 * request, so a sequence always occupies the same row; a slot with nothing ready (or a request of
 * other shapes) gets a filler row. Returns the rows, `{ waitUntilUs }` while the batch may wait for
 * more ready slots, or undefined when no slot is ready.
 */
export function formDirectBatch(runner: Runner, nowUs: number, rules: DirectBatchRules): Row[] | { waitUntilUs: number } | undefined {
  let maxSlot = -1;
  let readyCount = 0;
  let earliest = Number.POSITIVE_INFINITY;
  let template: Entry | undefined;
  for (let i = 0; i <= runner.maxActive; i++) {
    const slot = runner.slots[i]!;
    // An idle sequence's release marker at the front: release the slot (a backlog may move in).
    while (slot.queue[0] === RELEASE) {
      slot.queue.shift();
      rules.release(slot);
    }
    const front = slot.queue[0];
    if (front === undefined) continue;
    template ??= front;
    readyCount++;
    maxSlot = i;
    earliest = Math.min(earliest, front.arrivalUs);
  }
  if (maxSlot < 0 || !template) {
    shrinkActive(runner);
    return undefined;
  }
  if (rules.delayUs > 0 && rules.minUtilization > 0 && !rules.stopping) {
    const age = nowUs - earliest;
    if (!(age > rules.delayUs || readyCount / rules.slotsPerBatch >= rules.minUtilization)) return { waitUntilUs: earliest + rules.delayUs + 1 };
  }
  const rows: Row[] = [];
  for (let i = 0; i <= maxSlot; i++) {
    const slot = runner.slots[i]!;
    const front = slot.queue[0];
    // A row must keep its slot's position: an empty slot, or one whose request cannot share
    // this batch's shapes, gets a filler row.
    if (front === undefined || front === RELEASE || front.key !== template.key) {
      rows.push({ request: rules.rows.filler(template, slot) });
      continue;
    }
    slot.queue.shift();
    const request = rules.rows.prepare(front, slot);
    front.row = request;
    rows.push({ request, entry: front });
    if (front.end) rules.release(slot);
  }
  shrinkActive(runner);
  return rows;
}

/** Lowers the runner's highest active slot past slots that hold no sequence and no work. */
function shrinkActive(runner: Runner): void {
  while (runner.maxActive >= 0) {
    const s = runner.slots[runner.maxActive]!;
    if (s.corr !== undefined || s.queue.length > 0) break;
    runner.maxActive--;
  }
}
