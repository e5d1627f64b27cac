import { describe, expect, it } from 'vitest';
import { RequestQueue, type QueueItem } from '../../src/scheduler/request-queue.ts';

interface Item extends QueueItem {
  id: number;
}
const item = (id: number, level = 0): Item => ({ id, level, lane: undefined });
const order = (q: RequestQueue<Item>) => {
  const ids: number[] = [];
  q.scan((i) => (ids.push(i.id), true));
  return ids;
};

describe('request queue', () => {
  it('serves levels in priority order, each FIFO then its delayed lane', () => {
    const q = new RequestQueue<Item>(2);
    const a = item(1, 1);
    const b = item(2, 0);
    const c = item(3, 0);
    const d = item(4, 0);
    [a, b, c, d].forEach((i) => q.push(i));
    q.delay(b);
    expect(order(q)).toEqual([3, 4, 2, 1]);
    q.remove(c);
    expect(order(q)).toEqual([4, 2, 1]);
    expect(q.size).toBe(3);
    expect(q.sizeOf(0)).toBe(2);
  });

  it('keeps memory proportional to what is queued behind a long-lived head', () => {
    const q = new RequestQueue<Item>(1);
    q.push(item(0));
    for (let i = 1; i <= 50_000; i++) {
      const it = item(i);
      q.push(it);
      q.remove(it);
    }
    expect(q.size).toBe(1);
    expect(q.slots).toBeLessThan(2000);
    expect(order(q)).toEqual([0]);
  });

  it('makes a level only while it holds requests, so 2^64-1 levels cost nothing', () => {
    const q = new RequestQueue<Item>(2 ** 64);
    const far = item(1, 2 ** 40);
    const near = item(2, 7);
    const first = item(3, 0);
    [far, near, first].forEach((i) => q.push(i));
    expect(order(q)).toEqual([3, 2, 1]);
    q.remove(near);
    expect([q.sizeOf(7), q.size, q.slots]).toEqual([0, 2, 2]);
    q.push(item(4, 7));
    expect(order(q)).toEqual([3, 4, 1]);
  });
});
