import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DynamicBatcher, batcherOptionsFromConfig, nullStatsRecorder } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { InferRequest, ModelConfig } from '../../src/index.ts';
import type { StatsRecorder } from '../../src/scheduler/index.ts';
import { autoInstance, completeAll, config, dynamicBatching, flush, manualInstance, openCalls, req, settle } from './helpers.ts';

interface Op {
  kind: 'enqueue' | 'advance' | 'complete' | 'cancel';
  rows: number;
  cols: number;
  priority: number;
  timeoutUs: number;
  n: number;
}

const opArb = fc.record({
  kind: fc.constantFrom<Op['kind']>('enqueue', 'enqueue', 'enqueue', 'advance', 'complete', 'complete', 'cancel'),
  rows: fc.integer({ min: 1, max: 4 }),
  cols: fc.integer({ min: 1, max: 3 }),
  priority: fc.integer({ min: 0, max: 3 }),
  timeoutUs: fc.constantFrom(0, 0, 50, 400),
  n: fc.integer({ min: 0, max: 1000 }),
});

const cfgArb = fc.record({
  maxBatch: fc.integer({ min: 1, max: 8 }),
  delay: fc.constantFrom(0, 100, 1000),
  preferred: fc.boolean(),
  levels: fc.constantFrom(0, 2),
  action: fc.constantFrom<'REJECT' | 'DELAY'>('REJECT', 'DELAY'),
  instances: fc.integer({ min: 1, max: 3 }),
  adaptive: fc.boolean(),
  /** A pipeline's hold of small batches (BatcherDeps.hold), in µs; 0 = none. */
  hold: fc.constantFrom(0, 0, 300, 5000),
});

/** A hold of a fixed length (a pipeline ensemble's varies; every property must hold for any). */
const holdOf = (us: number) => (us > 0 ? { hold: { holdUs: () => us } } : {});

type Cfg = typeof cfgArb extends fc.Arbitrary<infer T> ? T : never;

/** `tritium.batching: adaptive` (adaptive-delay.ts) or Triton's fixed delay: every property holds for both. */
const batchingParameter = (adaptive: boolean): Partial<Pick<ModelConfig, 'parameters'>> =>
  adaptive ? { parameters: { 'tritium.batching': { string_value: 'adaptive' } } } : {};

function build(c: Cfg): ModelConfig {
  return config({
    ...batchingParameter(c.adaptive),
    max_batch_size: c.maxBatch,
    dynamic_batching: dynamicBatching({
      preferred_batch_size: c.preferred && c.maxBatch > 2 ? [2, c.maxBatch - 1] : [],
      max_queue_delay_microseconds: c.delay,
      priority_levels: c.levels,
      default_priority_level: c.levels > 0 ? 1 : 0,
      default_queue_policy: { timeout_action: c.action, default_timeout_microseconds: 600, allow_timeout_override: true, max_queue_size: 0 },
    }),
  });
}

describe('dynamic batcher properties', () => {
  it('answers every request exactly once and never exceeds max_batch_size', async () => {
    await fc.assert(
      fc.asyncProperty(cfgArb, fc.array(opArb, { maxLength: 60 }), async (c, ops) => {
        const clock = manualClock();
        const instances = Array.from({ length: c.instances }, () => manualInstance());
        const s = new DynamicBatcher(batcherOptionsFromConfig(build(c), 1), { instances, clock, ...holdOf(c.hold) });
        const answers = new Map<string, number>();
        const controllers: AbortController[] = [];
        const count = (id: string) => answers.set(id, (answers.get(id) ?? 0) + 1);
        const ids: string[] = [];
        for (const op of ops) {
          if (op.kind === 'enqueue') {
            const ctl = new AbortController();
            controllers.push(ctl);
            const r = req(1, { rows: Math.min(op.rows, c.maxBatch), cols: op.cols, priority: op.priority, timeoutUs: op.timeoutUs, signal: ctl.signal });
            ids.push(r.id);
            s.enqueue(r).then(
              () => count(r.id),
              () => count(r.id),
            );
          } else if (op.kind === 'advance') clock.advance(op.n);
          else if (op.kind === 'cancel' && controllers.length > 0) controllers[op.n % controllers.length]!.abort();
          else if (op.kind === 'complete') {
            const open = openCalls(instances);
            const call = open[op.n % Math.max(1, open.length)];
            if (call) {
              if (op.n % 5 === 0) call.reject(new Error('boom'));
              else call.resolve();
            }
          }
          await flush(2);
        }
        // Drain: complete everything, move time on, until nothing is left.
        for (let guard = 0; guard < 1000 && s.inflight > 0; guard++) {
          completeAll(instances);
          clock.advance(2000);
          await flush(2);
        }
        expect(s.inflight).toBe(0);
        for (const id of ids) expect(answers.get(id)).toBe(1);
        for (const inst of instances) {
          for (const call of inst.calls) {
            const rows = call.batch.reduce((n, r) => n + r.inputs[0]!.shape[0]!, 0);
            expect(rows).toBeLessThanOrEqual(c.maxBatch);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('with an idle instance no request waits longer than max_queue_delay (fixed or adaptive), plus a hold if one is set', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.constantFrom(0, 0, 300, 5000),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 700 }), fc.integer({ min: 1, max: 3 })), { maxLength: 40 }),
        async (adaptive, hold, maxBatch, delay, arrivals) => {
          const clock = manualClock();
          let worst = 0;
          const stats: StatsRecorder = { ...nullStatsRecorder, requestDequeued: (ns) => void (worst = Math.max(worst, ns)) };
          const cfg = config({ ...batchingParameter(adaptive), max_batch_size: maxBatch, dynamic_batching: dynamicBatching({ max_queue_delay_microseconds: delay }) });
          // As many instances as requests: one is always idle, even while a timer dispatches mid-advance.
          const instances = arrivals.map(() => autoInstance());
          const s = new DynamicBatcher(batcherOptionsFromConfig(cfg, 1), { instances: instances.length ? instances : [autoInstance()], clock, stats, ...holdOf(hold) });
          for (const [gap, cols] of arrivals) {
            clock.advance(gap);
            await flush(2);
            void s.enqueue(req(1, { cols }));
          }
          for (let guard = 0; guard < 100 && s.inflight > 0; guard++) {
            clock.advance(Math.ceil((delay + hold) / 4));
            await flush(2);
          }
          expect(s.inflight).toBe(0);
          expect(worst).toBeLessThanOrEqual((delay + hold) * 1000);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('releases responses in arrival order with preserve_ordering', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4 }), async (picks, n) => {
        const instances = Array.from({ length: n }, () => manualInstance());
        const cfg = config({ max_batch_size: 3, dynamic_batching: dynamicBatching({ preserve_ordering: true }) });
        const s = new DynamicBatcher(batcherOptionsFromConfig(cfg, 1), { instances, clock: manualClock() });
        const order: number[] = [];
        picks.forEach((_, i) => void s.enqueue(req(i, { cols: 1 + (i % 2) })).then(() => order.push(i)));
        await flush(2);
        // Complete executions in a random order.
        for (const p of picks) {
          const open = openCalls(instances);
          const call = open[p % Math.max(1, open.length)];
          if (!call) break;
          call.resolve();
          await flush(2);
        }
        for (let guard = 0; guard < 100 && s.inflight > 0; guard++) {
          completeAll(instances);
          await flush(2);
        }
        expect(order).toEqual(picks.map((_, i) => i));
      }),
      { numRuns: 60 },
    );
  });

  it('overload far past max_queue_size: UNAVAILABLE answers, bounded queue, nothing lost', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 4,
      dynamic_batching: dynamicBatching({
        default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 16 },
      }),
    });
    const s = new DynamicBatcher(batcherOptionsFromConfig(cfg, 1), { instances: [inst], clock: manualClock() });
    const total = 10_000;
    const results: ReturnType<typeof settle<unknown>>[] = [];
    let maxQueued = 0;
    for (let i = 0; i < total; i++) {
      results.push(settle(s.enqueue(req(i) as InferRequest)));
      maxQueued = Math.max(maxQueued, s.queued);
      if (i % 1000 === 999) {
        completeAll([inst]);
        await flush(2);
      }
    }
    for (let guard = 0; guard < 100 && s.inflight > 0; guard++) {
      completeAll([inst]);
      await flush(2);
    }
    expect(maxQueued).toBeLessThanOrEqual(16);
    expect(results.every((r) => r.done)).toBe(true);
    const rejected = results.filter((r) => r.error?.code === 'UNAVAILABLE');
    expect(rejected.length).toBeGreaterThan(total * 0.9);
    expect(rejected[0]!.error!.message).toMatch(/Exceeds maximum queue size$/);
    expect(results.filter((r) => r.value).length + rejected.length).toBe(total);
    expect(s.inflight).toBe(0);
  });
});
