/**
 * Splitting oversized requests (`tritium.split_rows`, opt-in), as a property: random request sizes
 * (up to the limit), max batch sizes, queue delays and poisoned rows. Every request that is not
 * poisoned gets exactly the rows it sent, in order (an identity model), every execution holds at
 * most max_batch_size rows, and a request with a poisoned row fails with that row's error while its
 * neighbours answer. Past the limit the server refuses the request, naming the parameter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tensorFromTyped, typedView } from '../../src/index.ts';
import type { InferRequest, ModelConfig } from '../../src/index.ts';
import { validateRequest } from '../../src/backend/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { splitRowsOf } from '../../src/scheduler/split-oversized.ts';
import { manualClock } from '../../src/testing/index.ts';
import { autoInstance, config, dynamicBatching, flush, settle } from './helpers.ts';

const POISON = -1;

function model(maxBatchSize: number, splitRows: number, delayUs: number): ModelConfig {
  return config({
    max_batch_size: maxBatchSize,
    parameters: { 'tritium.split_rows': { string_value: String(splitRows) } },
    dynamic_batching: dynamicBatching({ max_queue_delay_microseconds: delayUs }),
  });
}

/** INPUT0 [rows, 2]: row r holds (base + r, base + r), or POISON for poisoned rows. */
function request(id: string, rows: number, base: number, poisoned: number | undefined): InferRequest {
  const v = new Float32Array(rows * 2);
  for (let r = 0; r < rows; r++) v.fill(r === poisoned ? POISON : base + r, r * 2, r * 2 + 2);
  return { id, model: 'm', inputs: [tensorFromTyped('INPUT0', 'FP32', [rows, 2], v)] };
}

describe('splitting oversized requests (property)', () => {
  it('answers every request with its own rows in order; no execution holds more than max_batch_size rows', async () => {
    const scenario = fc.record({
      maxBatchSize: fc.integer({ min: 1, max: 8 }),
      delayUs: fc.constantFrom(0, 1000),
      requests: fc.array(fc.record({ rows: fc.integer({ min: 1, max: 40 }), poison: fc.option(fc.nat(39), { nil: undefined }) }), { minLength: 1, maxLength: 8 }),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const executions: (readonly InferRequest[])[] = [];
        const clock = manualClock();
        const cfg = model(s.maxBatchSize, 40, s.delayUs);
        const scheduler = createScheduler(cfg, {
          modelName: 'm',
          version: 1,
          instances: [autoInstance({ poison: POISON, onBatch: (b) => executions.push(b) }), autoInstance({ poison: POISON, onBatch: (b) => executions.push(b) })],
          clock,
          infer: () => Promise.reject(new Error('unused')),
        });
        const sent = s.requests.map((r, i) => ({ rows: r.rows, poisoned: r.poison !== undefined && r.poison < r.rows ? r.poison : undefined, base: i * 100 }));
        const outcomes = sent.map((r, i) => settle(scheduler.enqueue(request(`q${i}`, r.rows, r.base, r.poisoned))));
        for (let k = 0; k < 100 && outcomes.some((o) => !o.done); k++) {
          clock.advance(1000);
          await flush(3);
        }
        sent.forEach((r, i) => {
          const o = outcomes[i]!;
          expect(o.done).toBe(true);
          if (r.poisoned !== undefined) {
            expect(o.error?.message).toMatch(/^poisoned request /);
            return;
          }
          expect(o.error).toBeUndefined();
          const out = o.value!.outputs[0]!;
          expect(out.shape).toEqual([r.rows, 2]);
          expect([...(typedView(out) as Float32Array)]).toEqual(Array.from({ length: r.rows * 2 }, (_, e) => r.base + Math.floor(e / 2)));
        });
        for (const batch of executions) expect(batch.reduce((n, x) => n + x.inputs[0]!.shape[0]!, 0)).toBeLessThanOrEqual(s.maxBatchSize);
      }),
      { numRuns: 100 },
    );
  });
});

describe('tritium.split_rows: bounds and refusals', () => {
  it('accepts up to the limit and refuses past it, naming the parameter', () => {
    const cfg = model(4, 10, 0);
    expect(validateRequest(cfg, request('a', 10, 0, undefined), splitRowsOf(cfg))).toBe(10);
    expect(() => validateRequest(cfg, request('b', 11, 0, undefined), splitRowsOf(cfg))).toThrow(
      "inference request batch-size must be <= 10 for 'm' (its 'tritium.split_rows')",
    );
    // Without the parameter: Triton's refusal at max_batch_size.
    const plain = config({ max_batch_size: 4, dynamic_batching: dynamicBatching() });
    expect(() => validateRequest(plain, request('c', 5, 0, undefined), splitRowsOf(plain))).toThrow("inference request batch-size must be <= 4 for 'm'");
  });

  it('refuses at load what it cannot split, naming why', () => {
    const load = (partial: Partial<ModelConfig>, value: string) =>
      createScheduler(config({ ...partial, parameters: { 'tritium.split_rows': { string_value: value } } }), {
        modelName: 'm',
        version: 1,
        instances: [],
        infer: () => Promise.reject(new Error('unused')),
      });
    expect(() => load({ max_batch_size: 4 }, 'many')).toThrow("parameter 'tritium.split_rows' must be an integer of rows up to 1048576, got 'many'");
    expect(() => load({ max_batch_size: 4 }, '2')).toThrow("must be at least max_batch_size (4), got '2'");
    expect(() => load({ max_batch_size: 0 }, '8')).toThrow('needs max_batch_size > 0');
    expect(() => load({ max_batch_size: 4, model_transaction_policy: { decoupled: true } }, '8')).toThrow('cannot be used by a decoupled model');
  });
});

describe('tritium.split_rows: a failing part', () => {
  it('fails the request once with its error and cancels the parts still queued', async () => {
    const executions: (readonly InferRequest[])[] = [];
    const clock = manualClock();
    const scheduler = createScheduler(model(2, 8, 0), {
      modelName: 'm',
      version: 1,
      instances: [autoInstance({ poison: POISON, onBatch: (b) => executions.push(b) })],
      clock,
      infer: () => Promise.reject(new Error('unused')),
    });
    // Rows 0-1 (poisoned), 2-3, 4-5: one instance, so the last two parts wait while the first fails.
    const failed = settle(scheduler.enqueue(request('q', 6, 1, 0)));
    const next = settle(scheduler.enqueue(request('n', 1, 50, undefined)));
    for (let k = 0; k < 10 && !(failed.done && next.done); k++) {
      clock.advance(1000);
      await flush(3);
    }
    expect(failed.error?.message).toBe('poisoned request q');
    expect(next.value?.outputs[0]!.shape).toEqual([1, 2]);
    expect(executions.flat().map((r) => r.id)).toEqual(['q', 'n']);
  });
});
