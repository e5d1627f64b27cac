/**
 * Adaptive batching (`tritium.batching: adaptive`, adaptive-delay.ts) on the manual clock: a lone
 * closed-loop client stops paying the queue delay after one probe, and a probe that sees no arrival
 * costs an eighth of the delay, not all of it; under a steady stream the batcher
 * keeps waiting and forms the same full batches as the fixed delay; the parameter is validated.
 * (The bounds — never past max_queue_delay, every request answered once — are properties in
 * batcher-properties.test.ts, run for both policies.)
 */
import { describe, expect, it } from 'vitest';
import { DynamicBatcher, batcherOptionsFromConfig, nullStatsRecorder } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { StatsRecorder } from '../../src/scheduler/index.ts';
import { PROBE_EVERY, PROBE_FRACTION } from '../../src/scheduler/adaptive-delay.ts';
import { autoInstance, config, dynamicBatching, flush, req } from './helpers.ts';

const DELAY_US = 10_000;

function batcher(policy: 'adaptive' | 'fixed' | string, instances: ModelInstance[], stats?: StatsRecorder) {
  const clock = manualClock();
  const cfg = config({
    max_batch_size: 8,
    parameters: { 'tritium.batching': { string_value: policy } },
    dynamic_batching: dynamicBatching({ max_queue_delay_microseconds: DELAY_US }),
  });
  return { clock, s: new DynamicBatcher(batcherOptionsFromConfig(cfg, 1), { instances, clock, ...(stats ? { stats } : {}) }) };
}

/** Queue times (µs) of a closed loop: one request at a time, the next 500 µs after each answer. */
async function loneClient(policy: 'adaptive' | 'fixed', requests: number): Promise<number[]> {
  const waits: number[] = [];
  const stats: StatsRecorder = { ...nullStatsRecorder, requestDequeued: (ns) => void waits.push(ns / 1000) };
  const { clock, s } = batcher(policy, [autoInstance()], stats);
  for (let i = 0; i < requests; i++) {
    let answered = false;
    void s.enqueue(req(i)).then(() => (answered = true));
    await flush(2);
    for (let guard = 0; guard < 20 && !answered; guard++) {
      clock.advance(DELAY_US / 4);
      await flush(2);
    }
    expect(answered).toBe(true);
    clock.advance(500);
  }
  return waits;
}

describe('adaptive batching', () => {
  it('a lone closed-loop client waits only on probes; the fixed delay makes it wait every time', async () => {
    const n = 2 * PROBE_EVERY;
    const adaptive = await loneClient('adaptive', n);
    const fixed = await loneClient('fixed', n);
    expect(fixed.every((w) => w >= DELAY_US)).toBe(true);
    const waited = adaptive.filter((w) => w > 0);
    expect(waited.length).toBeLessThanOrEqual(Math.ceil(n / PROBE_EVERY) + 1);
    expect(adaptive.every((w) => w <= DELAY_US * PROBE_FRACTION)).toBe(true); // no probe saw an arrival
    const sorted = [...adaptive].sort((a, b) => a - b);
    expect(sorted[Math.floor(n / 2)]).toBe(0); // the median request does not wait at all
  });

  it('a probe with no arrival ends after an eighth of the delay; one that sees an arrival waits the whole delay', async () => {
    const probeUs = DELAY_US * PROBE_FRACTION;
    // Alone: sent when the probe ends.
    {
      const sizes: number[] = [];
      const { clock, s } = batcher('adaptive', [autoInstance({ onBatch: (b) => sizes.push(b.length) })]);
      let answered = false;
      void s.enqueue(req(0)).then(() => (answered = true));
      await flush(2);
      clock.advance(probeUs - 1);
      await flush(2);
      expect(answered).toBe(false);
      clock.advance(1);
      await flush(4);
      expect(answered).toBe(true);
      expect(sizes).toEqual([1]);
    }
    // A second request within the probe: both wait out the delay and go as one batch.
    {
      const sizes: number[] = [];
      const { clock, s } = batcher('adaptive', [autoInstance({ onBatch: (b) => sizes.push(b.length) })]);
      const answers = [s.enqueue(req(0))];
      await flush(2);
      clock.advance(probeUs / 2);
      answers.push(s.enqueue(req(1)));
      await flush(2);
      clock.advance(DELAY_US - probeUs / 2 - 1);
      await flush(4);
      expect(sizes).toEqual([]);
      clock.advance(1);
      await flush(4);
      await Promise.all(answers);
      expect(sizes).toEqual([2]);
    }
  });

  it('under a steady stream it keeps waiting, forming the same full batches as the fixed delay', async () => {
    for (const policy of ['adaptive', 'fixed'] as const) {
      const sizes: number[] = [];
      const instance = autoInstance({ onBatch: (b) => sizes.push(b.length) });
      const { clock, s } = batcher(policy, [instance]);
      const answers: Promise<unknown>[] = [];
      // One request every 500 µs: 20 arrive within each 10 ms delay, so every batch fills to 8.
      for (let i = 0; i < 80; i++) {
        answers.push(s.enqueue(req(i)));
        await flush(2);
        clock.advance(500);
        await flush(2);
      }
      clock.advance(DELAY_US);
      await flush(4);
      await Promise.all(answers);
      const full = sizes.filter((n) => n === 8).length;
      expect(full, `${policy}: ${sizes.join(',')}`).toBeGreaterThanOrEqual(9);
    }
  });

  it("refuses an unknown tritium.batching value, naming the parameter and the value", () => {
    expect(() => batcher('sometimes', [autoInstance()])).toThrow("model 'm': parameter 'tritium.batching' must be one of fixed, adaptive, got 'sometimes'");
    expect(() => batcher('fixed', [autoInstance()])).not.toThrow();
  });
});
