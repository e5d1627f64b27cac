/**
 * The batcher's queue: one FIFO per priority level (lower level number = served first), each with
 * a "delayed" lane for requests whose DELAY timeout expired (served after the level's other
 * requests, as Triton does). Removal anywhere is O(1) by marking; heads are compacted lazily so
 * memory stays proportional to what is queued.
 */

/** What the queue needs to know about an entry. */
export interface QueueItem {
  /** Priority level index this entry lives in. */
  level: number;
  /** 'main' or 'delayed' while queued; undefined once removed. */
  lane: 'main' | 'delayed' | undefined;
}

class Lane<T extends QueueItem> {
  items: T[] = [];
  head = 0;
  /** Drops removed items at the head; rebuilds when holes dominate (`live` = items still queued here or above). */
  compact(laneName: 'main' | 'delayed', live: number): void {
    while (this.head < this.items.length && this.items[this.head]!.lane !== laneName) this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.items.length - this.head > 2 * live + 1024) {
      // Holes behind a long-lived head (e.g. a starved low priority level with timeouts).
      this.items = this.items.slice(this.head).filter((i) => i.lane === laneName);
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

export class RequestQueue<T extends QueueItem> {
  private readonly levels: { main: Lane<T>; delayed: Lane<T>; count: number }[] = [];
  private total = 0;

  /** `levelCount` levels indexed 0..levelCount-1. */
  constructor(levelCount: number) {
    for (let i = 0; i < Math.max(1, levelCount); i++) this.levels.push({ main: new Lane(), delayed: new Lane(), count: 0 });
  }

  get size(): number {
    return this.total;
  }

  /** Array slots held, holes included (diagnostics: stays proportional to `size`). */
  get slots(): number {
    let n = 0;
    for (const l of this.levels) n += l.main.items.length - l.main.head + l.delayed.items.length - l.delayed.head;
    return n;
  }

  sizeOf(level: number): number {
    return this.levels[level]!.count;
  }

  push(item: T): void {
    const lvl = this.levels[item.level]!;
    item.lane = 'main';
    lvl.main.items.push(item);
    lvl.count++;
    this.total++;
  }

  /** Removes a queued item (no-op when it is not queued). */
  remove(item: T): void {
    const lane = item.lane;
    if (!lane) return;
    const lvl = this.levels[item.level]!;
    item.lane = undefined;
    lvl.count--;
    this.total--;
    lvl[lane].compact(lane, lvl.count);
  }

  /** Moves a queued item to its level's delayed lane (DELAY timeout action). */
  delay(item: T): void {
    if (item.lane !== 'main') return;
    const lvl = this.levels[item.level]!;
    item.lane = 'delayed';
    lvl.delayed.items.push(item);
    lvl.main.compact('main', lvl.count);
  }

  /** Visits queued items in service order until `visit` returns false. */
  scan(visit: (item: T) => boolean): void {
    for (const lvl of this.levels) {
      if (lvl.count === 0) continue;
      for (const laneName of ['main', 'delayed'] as const) {
        const lane = lvl[laneName];
        const items = lane.items;
        for (let i = lane.head; i < items.length; i++) {
          const item = items[i]!;
          if (item.lane !== laneName) continue;
          if (!visit(item)) return;
        }
      }
    }
  }
}
