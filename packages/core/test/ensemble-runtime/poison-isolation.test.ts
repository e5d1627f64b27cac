/**
 * Poison isolation, as a property (issue 12 item 1): random batches of ensemble requests, 0..k of
 * them poisoned, pipeline and per-step ensembles, composing models with or without their own
 * dynamic batcher, the poison striking at any step. A poisoned request makes the whole execute of
 * the step that meets it reject (a throw, as a real model failing on one input would). Exactly the
 * poisoned requests fail, each with the error of its own execution (naming only itself), and the
 * bisection costs a bounded number of extra executions. In-thread instances and a manual clock keep
 * the broad run fast; the same mechanism through real model.ts workers is in
 * packages/backend-python-like/test/poison-isolation.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped } from '../../src/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { EnsembleStep, InferRequest, InferResponse, ModelConfig } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { Scheduler } from '../../src/scheduler/index.ts';
import { config, dynamicBatching, flush, input, settle } from '../scheduler/helpers.ts';

const STEPS = 3;
/** Values at or above this mark a poisoned row; the value names the request (POISON + index). */
const POISON = 10_000;

const f32 = (t: { data: Uint8Array }) => [...new Float32Array(t.data.slice().buffer)];
const out = (name: string) => ({ name, data_type: 'TYPE_FP32' as const, dims: [2], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false });

interface Scenario {
  readonly mode: 'pipeline' | 'per-step';
  readonly stepBatchers: boolean;
  readonly poisonStep: number;
  readonly instances: number;
  readonly concurrency: number;
  readonly requests: readonly { rows: number; poisoned: boolean }[];
}

/** One step model: identity on INPUT0 → OUTPUT0; rejects the whole execute when it is the poisoned step and a row is marked. */
function stepInstance(poisoned: boolean, executions: InferRequest[][]): ModelInstance {
  return {
    async execute(batch) {
      executions.push([...batch]);
      await Promise.resolve();
      if (poisoned) {
        const marks = [...new Set(batch.flatMap((r) => f32(r.inputs[0]!).filter((v) => v >= POISON)))].sort((a, b) => a - b);
        if (marks.length > 0) throw new InferError('INTERNAL', `poisoned rows ${marks.join(',')}`);
      }
      return { results: batch.map((r): InferResponse => ({ id: r.id, model: r.model, version: 1, outputs: [{ ...r.inputs[0]!, name: 'OUTPUT0' }] })) };
    },
    dispose: () => Promise.resolve(),
  };
}

function step(i: number): EnsembleStep {
  return { model_name: `s${i}`, model_version: -1, input_map: { INPUT0: i === 0 ? 'IN' : `t${i}` }, output_map: { OUTPUT0: i === STEPS - 1 ? 'OUT' : `t${i + 1}` }, model_namespace: '' };
}

/** Runs a scenario; returns each request's outcome and the executions of every step model. */
async function run(s: Scenario, withPoison: boolean) {
  const clock = manualClock();
  const schedulers = new Map<string, Scheduler>();
  const configs = new Map<string, ModelConfig>();
  const infer = (r: InferRequest): Promise<InferResponse> => schedulers.get(r.model)!.enqueue(r);
  const add = (cfg: ModelConfig, instances: ModelInstance[] = []) => {
    configs.set(cfg.name, cfg);
    schedulers.set(cfg.name, createScheduler(cfg, { modelName: cfg.name, version: 1, instances, infer, clock, getModelConfig: (n) => configs.get(n) }));
  };
  const executions: InferRequest[][][] = [];
  for (let i = 0; i < STEPS; i++) {
    executions.push([]);
    const instances = Array.from({ length: s.instances }, () => stepInstance(i === s.poisonStep, executions[i]!));
    add(
      config({
        name: `s${i}`,
        max_batch_size: 64,
        input: [input('INPUT0', [2])],
        output: [out('OUTPUT0')],
        ...(s.stepBatchers ? { dynamic_batching: dynamicBatching({ preferred_batch_size: [8], max_queue_delay_microseconds: 500 }) } : {}),
      }),
      instances,
    );
  }
  add(
    config({
      name: 'E',
      platform: 'ensemble',
      backend: '',
      max_batch_size: 64,
      input: [input('IN', [2])],
      output: [out('OUT')],
      ensemble_scheduling: { step: Array.from({ length: STEPS }, (_, i) => step(i)), max_inflight_requests: 0 },
      parameters: { 'tritium.pipeline.concurrency': { string_value: String(s.concurrency) } },
      ...(s.mode === 'pipeline' ? { dynamic_batching: dynamicBatching({ preferred_batch_size: [16], max_queue_delay_microseconds: 1000 }) } : {}),
    }),
  );
  const outcomes = s.requests.map((r, i) => {
    const values = Array.from({ length: r.rows * 2 }, (_, k) => (withPoison && r.poisoned && k === 1 ? POISON + i : i * 10 + k));
    return settle(schedulers.get('E')!.enqueue({ id: `q${i}`, model: 'E', inputs: [tensorFromTyped('IN', 'FP32', [r.rows, 2], new Float32Array(values))] }));
  });
  for (let k = 0; k < 200 && outcomes.some((o) => !o.done); k++) {
    clock.advance(500);
    await flush(4);
  }
  return { outcomes, executions };
}

const scenarioArb = fc.record({
  mode: fc.constantFrom<Scenario['mode']>('pipeline', 'per-step'),
  stepBatchers: fc.boolean(),
  poisonStep: fc.integer({ min: 0, max: STEPS - 1 }),
  instances: fc.integer({ min: 1, max: 2 }),
  concurrency: fc.integer({ min: 1, max: 3 }),
  requests: fc.array(fc.record({ rows: fc.integer({ min: 1, max: 3 }), poisoned: fc.nat(3).map((v) => v === 0) }), { minLength: 1, maxLength: 16 }),
});

describe('poison isolation (property)', () => {
  it('exactly the poisoned requests fail, each with its own error, in a bounded number of extra executions', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const poisoned = s.requests.map((r, i) => (r.poisoned ? i : -1)).filter((i) => i >= 0);
        const { outcomes, executions } = await run(s, true);
        s.requests.forEach((r, i) => {
          const o = outcomes[i]!;
          expect(o.done, `request ${i} answered`).toBe(true);
          if (r.poisoned) {
            expect(o.error?.code).toBe('INTERNAL');
            // Its own error: the execution that failed it held no other poisoned request.
            expect(o.error?.message).toBe(`in ensemble 'E', poisoned rows ${POISON + i}`);
            return;
          }
          expect(o.error, `request ${i} must not fail: ${o.error?.message}`).toBeUndefined();
          expect(o.value!.id).toBe(`q${i}`);
          expect(f32(o.value!.outputs[0]!)).toEqual(Array.from({ length: r.rows * 2 }, (_, k) => i * 10 + k));
        });
        // Extra executions at the poisoned step, against the same scenario without poison.
        const control = await run(s, false);
        expect(control.outcomes.every((o) => o.value)).toBe(true);
        const extra = executions[s.poisonStep]!.length - control.executions[s.poisonStep]!.length;
        const log2n = Math.ceil(Math.log2(Math.max(2, s.requests.length)));
        expect(extra).toBeLessThanOrEqual(2 * poisoned.length * log2n);
      }),
      { numRuns: 150 },
    );
  });
});
