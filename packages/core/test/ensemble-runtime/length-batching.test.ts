/**
 * Length-aware batching in a pipeline ensemble (tritium.batch_tokens), as a property: random row
 * lengths, budgets, execution costs, batch sizes, pipeline concurrency, ordering and poisoned rows.
 * Every request that is not poisoned gets exactly its answer when sent alone (the steps' math does
 * not depend on padding), each poisoned one fails alone with its own error, answers arrive in
 * request order under preserve_ordering, and no execution of the step after the tokenizer holds
 * more padded tokens than the budget unless it is a single row. In-thread step models and a manual
 * clock keep the broad run fast.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped, typedView } from '../../src/index.ts';
import type { InferRequest, InferResponse, ModelConfig, Tensor } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import { createScheduler, type Scheduler } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import { config, dynamicBatching, flush, input, settle } from '../scheduler/helpers.ts';

/** A row whose seed is at least this is poisoned: the encoder fails the whole execute that holds it. */
const POISON = 10_000;
const I64 = 'TYPE_INT64' as const;
const io = (name: string, dims: number[]) => ({ ...input(name, dims), data_type: I64 });
const out = (name: string, dims: number[]) => ({ name, data_type: I64, dims, label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false });
const i64 = (t: Tensor): bigint[] => [...(typedView(t) as BigInt64Array)];

interface Row {
  readonly length: number;
  readonly seed: number;
}

/** The tokenizer: IN [rows, 2] (length, seed) → IDS, MASK [rows, longest], padded with 0 as a real tokenizer pads. */
function tokenize(r: InferRequest): InferResponse {
  const v = i64(r.inputs[0]!);
  const rows = r.inputs[0]!.shape[0]!;
  let width = 0;
  for (let i = 0; i < rows; i++) width = Math.max(width, Number(v[i * 2]!));
  const ids = new BigInt64Array(rows * width);
  const mask = new BigInt64Array(rows * width);
  for (let i = 0; i < rows; i++) {
    for (let p = 0; p < Number(v[i * 2]!); p++) {
      ids[i * width + p] = v[i * 2 + 1]! * 1000n + BigInt(p + 1);
      mask[i * width + p] = 1n;
    }
  }
  return {
    id: r.id,
    model: r.model,
    version: 1,
    outputs: [tensorFromTyped('IDS', 'INT64', [rows, width], ids), tensorFromTyped('MASK', 'INT64', [rows, width], mask)],
  };
}

/** The encoder: SUM [rows, 1] = Σ ids × mask, and TOK [rows, width] = ids × mask × 2 (a per-token output). */
function encode(r: InferRequest): InferResponse {
  const ids = r.inputs.find((t) => t.name === 'IDS')!;
  const mask = i64(r.inputs.find((t) => t.name === 'MASK')!);
  const [rows, width] = ids.shape as [number, number];
  const v = i64(ids);
  const marks = [...new Set(v.filter((x) => x >= BigInt(POISON) * 1000n).map((x) => Number(x / 1000n)))].sort((a, b) => a - b);
  if (marks.length > 0) throw new InferError('INTERNAL', `poisoned rows ${marks.join(',')}`);
  const sum = new BigInt64Array(rows);
  const tok = new BigInt64Array(rows * width);
  for (let i = 0; i < rows; i++) {
    for (let p = 0; p < width; p++) {
      sum[i] += v[i * width + p]! * mask[i * width + p]!;
      tok[i * width + p] = v[i * width + p]! * mask[i * width + p]! * 2n;
    }
  }
  return { id: r.id, model: r.model, version: 1, outputs: [tensorFromTyped('SUM', 'INT64', [rows, 1], sum), tensorFromTyped('TOK', 'INT64', [rows, width], tok)] };
}

/** The last step: FINAL = SUM + 1 (a step after the grouped one, fed only by it). */
function finish(r: InferRequest): InferResponse {
  const s = i64(r.inputs[0]!).map((x) => x + 1n);
  return { id: r.id, model: r.model, version: 1, outputs: [tensorFromTyped('FINAL', 'INT64', [s.length, 1], BigInt64Array.from(s))] };
}

function instance(run: (r: InferRequest) => InferResponse, executions: InferRequest[][]): ModelInstance {
  return {
    async execute(batch) {
      executions.push([...batch]);
      await Promise.resolve();
      // A step model's execute fails as a whole, as a real one does when one input breaks it.
      return { results: batch.map(run) };
    },
    dispose: () => Promise.resolve(),
  };
}

interface Scenario {
  readonly budget: number;
  readonly executionCost: number;
  readonly concurrency: number;
  readonly preserveOrdering: boolean;
  readonly preferred: number;
  readonly requests: readonly (readonly Row[])[];
}

async function run(s: Scenario, requests: readonly (readonly Row[])[], budgeted: boolean) {
  const clock = manualClock();
  const schedulers = new Map<string, Scheduler>();
  const configs = new Map<string, ModelConfig>();
  const infer = (r: InferRequest): Promise<InferResponse> => schedulers.get(r.model)!.enqueue(r);
  const add = (cfg: ModelConfig, instances: ModelInstance[] = []) => {
    configs.set(cfg.name, cfg);
    schedulers.set(cfg.name, createScheduler(cfg, { modelName: cfg.name, version: 1, instances, infer, clock, getModelConfig: (n) => configs.get(n) }));
  };
  const executions = { tok: [] as InferRequest[][], enc: [] as InferRequest[][], fin: [] as InferRequest[][] };
  add(config({ name: 'tok', max_batch_size: 64, input: [io('IN', [2])], output: [out('IDS', [-1]), out('MASK', [-1])] }), [instance(tokenize, executions.tok)]);
  add(config({ name: 'enc', max_batch_size: 64, input: [io('IDS', [-1]), io('MASK', [-1])], output: [out('SUM', [1]), out('TOK', [-1])] }), [
    instance(encode, executions.enc),
    instance(encode, executions.enc),
  ]);
  add(config({ name: 'fin', max_batch_size: 64, input: [io('SUM', [1])], output: [out('FINAL', [1])] }), [instance(finish, executions.fin)]);
  const parameters: ModelConfig['parameters'] = { 'tritium.pipeline.concurrency': { string_value: String(s.concurrency) } };
  if (budgeted) {
    parameters['tritium.batch_tokens'] = { string_value: String(s.budget) };
    parameters['tritium.batch_tokens.lengths'] = { string_value: 'MASK' };
    parameters['tritium.batch_tokens.execution_cost'] = { string_value: String(s.executionCost) };
  }
  add(
    config({
      name: 'E',
      platform: 'ensemble',
      backend: '',
      max_batch_size: 64,
      input: [io('IN', [2])],
      output: [out('FINAL', [1]), out('TOK', [-1]), out('MASK', [-1])],
      ensemble_scheduling: {
        step: [
          { model_name: 'tok', model_version: -1, input_map: { IN: 'IN' }, output_map: { IDS: 'ids', MASK: 'MASK' }, model_namespace: '' },
          { model_name: 'enc', model_version: -1, input_map: { IDS: 'ids', MASK: 'MASK' }, output_map: { SUM: 'sum', TOK: 'TOK' }, model_namespace: '' },
          { model_name: 'fin', model_version: -1, input_map: { SUM: 'sum' }, output_map: { FINAL: 'FINAL' }, model_namespace: '' },
        ],
        max_inflight_requests: 0,
      },
      parameters,
      dynamic_batching: dynamicBatching({ preferred_batch_size: [s.preferred], max_queue_delay_microseconds: 1000, preserve_ordering: s.preserveOrdering }),
    }),
  );
  const order: number[] = [];
  const outcomes = requests.map((rows, i) => {
    const values = BigInt64Array.from(rows.flatMap((r) => [BigInt(r.length), BigInt(r.seed)]));
    const p = schedulers.get('E')!.enqueue({ id: `q${i}`, model: 'E', inputs: [tensorFromTyped('IN', 'INT64', [rows.length, 2], values)] });
    void p.then(
      () => order.push(i),
      () => order.push(i),
    );
    return settle(p);
  });
  for (let k = 0; k < 400 && outcomes.some((o) => !o.done); k++) {
    clock.advance(500);
    await flush(4);
  }
  return { outcomes, executions, order };
}

/** A request's outputs as sent alone: FINAL, TOK (each row its ids × 2, padded to the request's longest) and MASK. */
function alone(rows: readonly Row[]) {
  const width = Math.max(...rows.map((r) => r.length));
  const final: bigint[] = [];
  const tok: bigint[] = [];
  const mask: bigint[] = [];
  for (const r of rows) {
    let sum = 0n;
    for (let p = 0; p < width; p++) {
      const id = p < r.length ? BigInt(r.seed) * 1000n + BigInt(p + 1) : 0n;
      sum += id;
      tok.push(id * 2n);
      mask.push(p < r.length ? 1n : 0n);
    }
    final.push(sum + 1n);
  }
  return { final, tok, mask, width };
}

/** `t` ([rows, w ≥ width]) cut to its first `width` columns; every cut-off element must be 0 (padding). */
function firstColumns(t: Tensor, width: number): bigint[] {
  const [rows, w] = t.shape as [number, number];
  const v = i64(t);
  const kept: bigint[] = [];
  for (let i = 0; i < rows; i++) {
    for (let p = 0; p < w; p++) {
      if (p < width) kept.push(v[i * w + p]!);
      else expect(v[i * w + p], 'padding beyond the request\'s own rows').toBe(0n);
    }
  }
  return kept;
}

const rowArb = fc.record({ length: fc.integer({ min: 1, max: 40 }), poisoned: fc.nat(9).map((v) => v === 0) });
const scenarioArb = fc.record({
  budget: fc.integer({ min: 1, max: 400 }),
  executionCost: fc.integer({ min: 0, max: 40 }),
  concurrency: fc.integer({ min: 1, max: 3 }),
  preserveOrdering: fc.boolean(),
  preferred: fc.integer({ min: 1, max: 32 }),
  requests: fc.array(fc.array(rowArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 24 }),
});

describe('length-aware batching in a pipeline (property)', () => {
  it('answers every request as alone, in order; poison fails alone; executions stay within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const requests = scenario.requests.map((rows, i) => rows.map((r, k) => ({ length: r.length, seed: r.poisoned ? POISON + i : i * 10 + k + 1 })));
        const s = { ...scenario, requests };
        const { outcomes, executions, order } = await run(s, requests, true);
        requests.forEach((rows, i) => {
          const o = outcomes[i]!;
          expect(o.done, `request ${i} answered`).toBe(true);
          if (rows.some((r) => r.seed >= POISON)) {
            expect(o.error?.message).toBe(`in ensemble 'E', poisoned rows ${POISON + i}`);
            return;
          }
          expect(o.error, `request ${i} must not fail: ${o.error?.message}`).toBeUndefined();
          const want = alone(rows);
          const got = new Map(o.value!.outputs.map((t) => [t.name, t]));
          expect(i64(got.get('FINAL')!)).toEqual(want.final);
          expect(firstColumns(got.get('TOK')!, want.width)).toEqual(want.tok);
          expect(firstColumns(got.get('MASK')!, want.width)).toEqual(want.mask);
        });
        if (s.preserveOrdering) expect(order).toEqual(requests.map((_, i) => i));
        for (const batch of executions.enc) {
          const [rows, width] = batch[0]!.inputs[0]!.shape as [number, number];
          expect(batch).toHaveLength(1);
          if (rows > 1) expect(rows * width).toBeLessThanOrEqual(s.budget);
          const tokens = batch[0]!.tokens!;
          expect(tokens.padded).toBe(rows * width);
        }
      }),
      { numRuns: 120 },
    );
  });

  it('pads less than one batch padded to its longest row', async () => {
    // Lengths 1..32, one row each, arriving together: one pipeline batch.
    const requests = Array.from({ length: 32 }, (_, i) => [{ length: ((i * 7) % 32) + 1, seed: i + 1 }]);
    const s: Scenario = { budget: 256, executionCost: 8, concurrency: 1, preserveOrdering: false, preferred: 32, requests };
    const grouped = await run(s, requests, true);
    const plain = await run(s, requests, false);
    const padded = (ex: InferRequest[][]) => ex.reduce((n, b) => n + b[0]!.inputs[0]!.shape[0]! * b[0]!.inputs[0]!.shape[1]!, 0);
    expect(padded(plain.executions.enc)).toBe(32 * 32);
    expect(padded(grouped.executions.enc)).toBeLessThan(0.7 * 32 * 32);
    expect(grouped.outcomes.every((o) => o.value)).toBe(true);
  });

  it('refuses at load a lengths tensor that is neither an ensemble input nor a step output', () => {
    const cfg = config({
      name: 'E',
      platform: 'ensemble',
      backend: '',
      max_batch_size: 8,
      input: [io('IN', [2])],
      output: [out('FINAL', [1])],
      ensemble_scheduling: {
        step: [{ model_name: 'tok', model_version: -1, input_map: { IN: 'IN' }, output_map: { IDS: 'FINAL' }, model_namespace: '' }],
        max_inflight_requests: 0,
      },
      parameters: { 'tritium.batch_tokens': { string_value: '64' }, 'tritium.batch_tokens.lengths': { string_value: 'nowhere' } },
      dynamic_batching: dynamicBatching(),
    });
    const infer = () => Promise.reject(new Error('unused'));
    expect(() => createScheduler(cfg, { modelName: 'E', version: 1, instances: [], infer })).toThrow(
      "model 'E': parameter 'tritium.batch_tokens.lengths' names 'nowhere', which is neither an ensemble input nor a step's output",
    );
  });
});
