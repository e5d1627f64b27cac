import type { Slot } from './sequence-entry.ts';

/** Triton's ready-slot order: the lowest slot index first, instances in order on ties. */
function slotBefore(a: Slot, b: Slot): boolean {
  return a.index !== b.index ? a.index < b.index : a.runner.index < b.runner.index;
}

/** The free slots of a sequence batcher, taken in Triton's order (a binary heap). */
export class FreeSlots {
  private readonly heap: Slot[] = [];

  /** Every slot free: slot 0 of each instance, then slot 1, … (already in heap order). */
  constructor(slotsPerInstance: number, runners: readonly { readonly slots: readonly Slot[] }[]) {
    for (let s = 0; s < slotsPerInstance; s++) for (const r of runners) this.heap.push(r.slots[s]!);
  }

  take(): Slot | undefined {
    const heap = this.heap;
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

  put(slot: Slot): void {
    const heap = this.heap;
    heap.push(slot);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!slotBefore(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  }
}
