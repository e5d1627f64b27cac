/**
 * Triton's rate limiter: resource counts (default: the largest need; explicit flags with Triton's
 * messages), exclusion, scaled priority, global vs per-device pools, cancellation while waiting.
 */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/scheduler/rate-limiter.ts';
import type { ModelRateLimiter } from '../../src/config/model-config.ts';

const needs = (resources: [string, number, boolean?][], priority = 0): ModelRateLimiter => ({
  resources: resources.map(([name, count, global]) => ({ name, count, global: global ?? false })),
  priority,
});

/** Lets every settled promise callback run. */
const flush = () => new Promise((r) => setImmediate(r));

describe('RateLimiter', () => {
  it('lets instances run together only while their shared resource lasts; the count defaults to the largest need', async () => {
    const rl = new RateLimiter();
    const a = rl.register('a/0', 0, needs([['R', 2]]));
    const b = rl.register('b/0', 0, needs([['R', 1]]));
    const c = rl.register('c/0', 0, needs([['R', 1]]));
    expect(rl.available('R', 0)).toBe(2);
    const releaseB = await b.acquire();
    const releaseC = await c.acquire();
    let aRuns = false;
    const aGranted = a.acquire().then((release) => ((aRuns = true), release));
    await flush();
    expect(aRuns).toBe(false); // a needs both copies
    releaseB();
    await flush();
    expect(aRuns).toBe(false);
    releaseC();
    (await aGranted)();
    expect(aRuns).toBe(true);
    expect(rl.holding().size).toBe(0);
  });

  it('serves waiters by scaled priority (executions x priority), a blocked head holding the rest back', async () => {
    const rl = new RateLimiter();
    const holder = rl.register('h/0', 0, needs([['R', 1]]));
    const low = rl.register('low/0', 0, needs([['R', 1]], 4));
    const high = rl.register('high/0', 0, needs([['R', 1]], 1));
    // Both have run once: scaled priority low = 4, high = 1.
    (await low.acquire())();
    (await high.acquire())();
    const order: string[] = [];
    const release = await holder.acquire();
    const lowDone = low.acquire().then((r) => (order.push('low'), r()));
    const highDone = high.acquire().then((r) => (order.push('high'), r()));
    release();
    await Promise.all([lowDone, highDone]);
    expect(order).toEqual(['high', 'low']);
  });

  it('keeps global and per-device pools apart, and refuses a resource that is both', async () => {
    const rl = new RateLimiter();
    const d0 = rl.register('a/0', 0, needs([['R', 1]]));
    const d1 = rl.register('a/1', 1, needs([['R', 1]]));
    const r0 = await d0.acquire();
    const r1 = await d1.acquire(); // another device: its own copy
    r0();
    r1();
    expect(() => rl.register('b/0', 0, needs([['R', 1, true]]))).toThrow(
      'Resource "R" is present as both global and device-specific resource in the model configuration.',
    );
  });

  it('takes explicit counts from --rate-limit-resource and refuses an instance that could never run', () => {
    const rl = new RateLimiter([{ name: 'R', count: 3 }, { name: 'G', count: 1, device: 5 }]);
    rl.register('a/0', 0, needs([['R', 2]]));
    expect(rl.available('R', 0)).toBe(3);
    expect(rl.available('R', 7)).toBe(3);
    expect(() => rl.register('b/0', 0, needs([['R', 4]]))).toThrow(
      'Resource count for "R" is limited to 3 which will prevent scheduling of one or more model instances, the minimum required count is 4',
    );
    // A resource no flag names has no copies once any flag is given (Triton's rule); a global one takes any flag of its name.
    expect(() => rl.register('c/0', 0, needs([['S', 1]]))).toThrow('Resource count for "S" is limited to 0');
    expect(() => rl.register('d/0', 0, needs([['G', 1, true]]))).not.toThrow();
  });

  it('drops a waiter whose execution is cancelled, and recomputes default counts when instances leave', async () => {
    const rl = new RateLimiter();
    const big = rl.register('big/0', 0, needs([['R', 2]]));
    const small = rl.register('small/0', 0, needs([['R', 2]]));
    const release = await big.acquire();
    const abort = new AbortController();
    const waiting = small.acquire(abort.signal);
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'CANCELLED' });
    release();
    big.unregister();
    small.unregister();
    expect(rl.available('R', 0)).toBe(0);
  });

  it('never holds back an instance that needs no resource', async () => {
    const rl = new RateLimiter();
    const free = rl.register('free/0', 0, undefined);
    const a = rl.register('a/0', 0, needs([['R', 1]]));
    const held = await a.acquire();
    const releases = await Promise.all([free.acquire(), free.acquire()]);
    releases.forEach((r) => r());
    held();
  });
});
