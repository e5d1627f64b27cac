/**
 * Length-aware batching of a model (`tritium.batch_tokens` beside `tritium.pad.<INPUT>`), as a
 * property: random lengths, budgets, execution costs, max batch sizes, preferred sizes, ordering and
 * poisoned requests. Every request that is not poisoned gets exactly its answer when sent alone (the
 * model sums each row, so padding with 0 changes nothing), each poisoned one fails alone, answers
 * arrive in request order under preserve_ordering, every execution holding more than one request
 * stays within the budget and max_batch_size, and the token statistics count what ran.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped, typedView } from '../../src/index.ts';
import type { InferRequest, InferResponse, ModelConfig, TokenCount } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import { createScheduler, nullStatsRecorder, type StatsRecorder } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import { config, dynamicBatching, flush, input, settle } from './helpers.ts';

const I64 = 'TYPE_INT64' as const;
/** A request whose seed is at least this is poisoned: the model answers it (only it) with an error. */
const POISON = 10_000;
const i64 = (r: InferRequest): bigint[] => [...(typedView(r.inputs[0]!) as BigInt64Array)];

interface Sent {
  readonly rows: number;
  readonly length: number;
  readonly seed: number;
}

/** IDS [rows, length]: row k, position p holds seed × 1000 + k × 100 + p + 1 (never 0, the pad value). */
function ids(s: Sent): BigInt64Array {
  const out = new BigInt64Array(s.rows * s.length);
  for (let k = 0; k < s.rows; k++) for (let p = 0; p < s.length; p++) out[k * s.length + p] = BigInt(s.seed * 1000 + k * 100 + p + 1);
  return out;
}

/** The model: SUM [rows, 1], each row's ids summed (padding adds 0). */
function summing(executions: InferRequest[][]): ModelInstance {
  return {
    async execute(batch) {
      executions.push([...batch]);
      await Promise.resolve();
      return {
        results: batch.map((r): InferResponse | InferError => {
          const [rows, width] = r.inputs[0]!.shape as [number, number];
          const v = i64(r);
          if (v.some((x) => x >= BigInt(POISON) * 1000n)) return new InferError('INTERNAL', `poisoned request ${r.id}`);
          const sum = new BigInt64Array(rows);
          for (let k = 0; k < rows; k++) for (let p = 0; p < width; p++) sum[k] += v[k * width + p]!;
          return { id: r.id, model: r.model, version: 1, outputs: [tensorFromTyped('SUM', 'INT64', [rows, 1], sum)] };
        }),
      };
    },
    dispose: () => Promise.resolve(),
  };
}

interface Scenario {
  readonly budget: number;
  readonly executionCost: number;
  readonly maxBatchSize: number;
  readonly preferred: number;
  readonly preserveOrdering: boolean;
  /** `tritium.split_rows` is set: a request over the budget splits (else it is refused). */
  readonly split: boolean;
  readonly requests: readonly Sent[];
}

async function run(s: Scenario) {
  const clock = manualClock();
  const executions: InferRequest[][] = [];
  const tokens: TokenCount[] = [];
  const stats: StatsRecorder = { ...nullStatsRecorder, tokens: (t) => tokens.push(t) };
  const cfg: ModelConfig = config({
    max_batch_size: s.maxBatchSize,
    input: [input('IDS', [-1], { data_type: I64 })],
    output: [{ name: 'SUM', data_type: I64, dims: [1], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false }],
    parameters: {
      'tritium.pad.IDS': { string_value: '0' },
      'tritium.batch_tokens': { string_value: String(s.budget) },
      'tritium.batch_tokens.lengths': { string_value: 'IDS' },
      'tritium.batch_tokens.execution_cost': { string_value: String(s.executionCost) },
      ...(s.split ? { 'tritium.split_rows': { string_value: String(s.maxBatchSize) } } : {}),
    },
    dynamic_batching: dynamicBatching({
      preferred_batch_size: [Math.min(s.preferred, s.maxBatchSize)],
      max_queue_delay_microseconds: 1000,
      preserve_ordering: s.preserveOrdering,
    }),
  });
  const scheduler = createScheduler(cfg, {
    modelName: 'm',
    version: 1,
    instances: [summing(executions), summing(executions)],
    clock,
    stats,
    infer: () => Promise.reject(new Error('unused')),
  });
  const order: number[] = [];
  const outcomes = s.requests.map((r, i) => {
    const p = scheduler.enqueue({ id: `q${i}`, model: 'm', inputs: [tensorFromTyped('IDS', 'INT64', [r.rows, r.length], ids(r))] });
    void p.then(
      () => order.push(i),
      () => order.push(i),
    );
    return settle(p);
  });
  for (let k = 0; k < 200 && outcomes.some((o) => !o.done); k++) {
    clock.advance(500);
    await flush(3);
  }
  return { outcomes, executions, tokens, order };
}

const sentArb = fc.record({ rows: fc.integer({ min: 1, max: 3 }), length: fc.integer({ min: 1, max: 48 }), poisoned: fc.nat(9).map((v) => v === 0) });
const scenarioArb = fc.record({
  budget: fc.integer({ min: 1, max: 300 }),
  executionCost: fc.integer({ min: 0, max: 40 }),
  maxBatchSize: fc.integer({ min: 3, max: 16 }),
  preferred: fc.integer({ min: 1, max: 16 }),
  preserveOrdering: fc.boolean(),
  split: fc.boolean(),
  requests: fc.array(sentArb, { minLength: 1, maxLength: 24 }),
});

describe('length-aware batching of a model (property)', () => {
  it('answers every request as alone, in order; poison fails alone; executions stay within the budget; split or refused past it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const requests = scenario.requests.map((r, i) => ({ rows: r.rows, length: r.length, seed: r.poisoned ? POISON + i : i + 1 }));
        const { outcomes, executions, tokens, order } = await run({ ...scenario, requests });
        requests.forEach((r, i) => {
          const o = outcomes[i]!;
          expect(o.done, `request ${i} answered`).toBe(true);
          if (!scenario.split && r.rows > 1 && r.rows * r.length > scenario.budget) {
            expect(o.error?.message).toBe(
              `inference request padded tokens must be <= ${scenario.budget} for 'm' (its 'tritium.batch_tokens'), got ${r.rows} rows x ${r.length} tokens of input 'IDS' = ${r.rows * r.length}; 'tritium.split_rows' lets such a request split into executions`,
            );
            return;
          }
          if (r.seed >= POISON) {
            expect(o.error?.message).toBe(`poisoned request q${i}`);
            return;
          }
          expect(o.error, `request ${i}: ${o.error?.message}`).toBeUndefined();
          const want = Array.from({ length: r.rows }, (_, k) => {
            let sum = 0n;
            for (let p = 0; p < r.length; p++) sum += BigInt(r.seed * 1000 + k * 100 + p + 1);
            return sum;
          });
          expect([...(typedView(o.value!.outputs[0]!) as BigInt64Array)]).toEqual(want);
        });
        if (scenario.preserveOrdering) expect(order).toEqual(requests.map((_, i) => i));
        let real = 0;
        let padded = 0;
        for (const batch of executions) {
          const rows = batch.reduce((n, r) => n + r.inputs[0]!.shape[0]!, 0);
          const width = batch[0]!.inputs[0]!.shape[1]!;
          expect(rows).toBeLessThanOrEqual(Math.max(scenario.maxBatchSize, batch[0]!.inputs[0]!.shape[0]!));
          // Only one row alone may exceed the budget (a request of several rows is split or refused).
          if (rows > 1) expect(rows * width).toBeLessThanOrEqual(scenario.budget);
          padded += rows * width;
          for (const r of batch) real += r.inputs[0]!.shape[0]! * Number(requests[Number(r.id.slice(1))]!.length);
        }
        expect(tokens.reduce((n, t) => n + t.padded, 0)).toBe(padded);
        expect(tokens.reduce((n, t) => n + t.real, 0)).toBe(real);
      }),
      { numRuns: 150 },
    );
  });

  it('sends the queue head with the requests nearest its length, the rest next', async () => {
    // Lengths 40, 2, 40, 2, 40, 2 queued together, budget 128: [40, 40, 40] (120 padded tokens) go
    // with the head and the three of length 2 after, where one batch of six pads to 240.
    const requests = [40, 2, 40, 2, 40, 2].map((length, i) => ({ rows: 1, length, seed: i + 1 }));
    const s: Scenario = { budget: 128, executionCost: 4, maxBatchSize: 8, preferred: 6, preserveOrdering: false, split: false, requests };
    const { executions, outcomes } = await run(s);
    expect(outcomes.every((o) => o.value)).toBe(true);
    expect(executions.map((b) => b.map((r) => r.id))).toEqual([
      ['q0', 'q2', 'q4'],
      ['q1', 'q3', 'q5'],
    ]);
  });

  it('refuses a budget whose lengths input is not padded, naming why', () => {
    const cfg = config({
      input: [input('IDS', [-1], { data_type: I64 })],
      parameters: { 'tritium.batch_tokens': { string_value: '64' }, 'tritium.batch_tokens.lengths': { string_value: 'IDS' } },
      dynamic_batching: dynamicBatching(),
    });
    expect(() => createScheduler(cfg, { modelName: 'm', version: 1, instances: [], infer: () => Promise.reject(new Error('unused')) })).toThrow(
      "model 'm': parameter 'tritium.batch_tokens.lengths' names an input without 'tritium.pad.IDS' (requests of other lengths could not batch), got 'IDS'",
    );
  });
});
