/**
 * The batcher's queue: one FIFO per priority level (lower level number = served first), each with
 * a "delayed" lane for requests whose DELAY timeout expired (served after the level's other
 * requests, as Triton does). Removal anywhere is O(1) by marking; heads are compacted lazily so
 * memory stays proportional to what is queued. A level exists only while it holds requests, as in
 * Triton's PriorityQueue, so `priority_levels` may be anything up to 2^64-1 at no cost.
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

interface Level<T extends QueueItem> {
  main: Lane<T>;
  delayed: Lane<T>;
  count: number;
}

export class RequestQueue<T extends QueueItem> {
  private readonly levels = new Map<number, Level<T>>();
  /** Keys of `levels`, ascending: the service order. */
  private readonly order: number[] = [];
  private total = 0;

  /** `levelCount` is the number of levels requests may use (indexed from 0); each is made on first use. */
  constructor(readonly levelCount: number) {}

  get size(): number {
    return this.total;
  }

  /** Array slots held, holes included (diagnostics: stays proportional to `size`). */
  get slots(): number {
    let n = 0;
    for (const l of this.levels.values()) n += l.main.items.length - l.main.head + l.delayed.items.length - l.delayed.head;
    return n;
  }

  sizeOf(level: number): number {
    return this.levels.get(level)?.count ?? 0;
  }

  push(item: T): void {
    let lvl = this.levels.get(item.level);
    if (!lvl) {
      lvl = { main: new Lane(), delayed: new Lane(), count: 0 };
      this.levels.set(item.level, lvl);
      let i = this.order.length;
      while (i > 0 && this.order[i - 1]! > item.level) i--;
      this.order.splice(i, 0, item.level);
    }
    item.lane = 'main';
    lvl.main.items.push(item);
    lvl.count++;
    this.total++;
  }

  /** Removes a queued item (no-op when it is not queued). */
  remove(item: T): void {
    const lane = item.lane;
    if (!lane) return;
    const lvl = this.levels.get(item.level)!;
    item.lane = undefined;
    lvl.count--;
    this.total--;
    if (lvl.count === 0) {
      // Every item of the level is removed: drop it (its lanes hold only holes).
      this.levels.delete(item.level);
      this.order.splice(this.order.indexOf(item.level), 1);
      return;
    }
    lvl[lane].compact(lane, lvl.count);
  }

  /** Moves a queued item to its level's delayed lane (DELAY timeout action). */
  delay(item: T): void {
    if (item.lane !== 'main') return;
    const lvl = this.levels.get(item.level)!;
    item.lane = 'delayed';
    lvl.delayed.items.push(item);
    lvl.main.compact('main', lvl.count);
  }

  /** Visits queued items in service order until `visit` returns false. */
  scan(visit: (item: T) => boolean): void {
    for (const key of this.order) {
      const lvl = this.levels.get(key)!;
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
