import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped } from '../../src/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { EnsembleStep, InferRequest, InferResponse, ModelConfig } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { Scheduler } from '../../src/scheduler/index.ts';
import { config, dynamicBatching, flush, input, manualInstance, settle } from '../scheduler/helpers.ts';

const out = (name: string, dims: number[]) => ({ name, data_type: 'TYPE_FP32' as const, dims, label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false });

/** In-thread backends: each maps a batch to per-request results. */
function instance(fn: (r: InferRequest) => InferResponse | InferError, onBatch?: (b: readonly InferRequest[]) => void): ModelInstance {
  return {
    async execute(batch) {
      onBatch?.(batch);
      await Promise.resolve();
      return { results: batch.map(fn) };
    },
    dispose: () => Promise.resolve(),
  };
}
const f32 = (t: { data: Uint8Array }) => [...new Float32Array(t.data.slice().buffer)];
const tensor = (name: string, shape: number[], values: number[]) => tensorFromTyped(name, 'FP32', shape, new Float32Array(values));
const get = (r: InferRequest, name: string) => r.inputs.find((t) => t.name === name)!;

/** identity: INPUT0 → OUTPUT0; fails a request whose INPUT0 holds 666. */
const identityFn = (model: string) => (r: InferRequest): InferResponse | InferError =>
  f32(get(r, 'INPUT0')).includes(666)
    ? new InferError('INTERNAL', `poisoned request in ${model}`)
    : { id: r.id, model, version: 1, outputs: [{ ...get(r, 'INPUT0'), name: 'OUTPUT0' }] };
/** add_sub: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1. */
const addSubFn = (r: InferRequest): InferResponse => {
  const a = f32(get(r, 'INPUT0'));
  const b = f32(get(r, 'INPUT1'));
  const shape = get(r, 'INPUT0').shape;
  return {
    id: r.id,
    model: 'add_sub',
    version: 1,
    outputs: [tensor('OUTPUT0', [...shape], a.map((x, i) => x + b[i]!)), tensor('OUTPUT1', [...shape], a.map((x, i) => x - b[i]!))],
  };
};

function step(model_name: string, input_map: Record<string, string>, output_map: Record<string, string>): EnsembleStep {
  return { model_name, model_version: -1, input_map, output_map, model_namespace: '' };
}

function ensemble(name: string, steps: EnsembleStep[], inputs: string[], outputs: string[], extra: Partial<ModelConfig> = {}): ModelConfig {
  return config({
    name,
    platform: 'ensemble',
    backend: '',
    input: inputs.map((n) => input(n, [2])),
    output: outputs.map((n) => out(n, [2])),
    ensemble_scheduling: { step: steps, max_inflight_requests: 0 },
    ...extra,
  });
}

/** A tiny router: model name → scheduler, the `infer` every ensemble step re-enters. */
class Router {
  readonly schedulers = new Map<string, Scheduler>();
  readonly configs = new Map<string, ModelConfig>();
  readonly calls: InferRequest[] = [];
  readonly clock = manualClock();
  infer = (r: InferRequest): Promise<InferResponse> => {
    this.calls.push(r);
    const s = this.schedulers.get(r.model);
    return s ? s.enqueue(r) : Promise.reject(new InferError('NOT_FOUND', `Request for unknown model: '${r.model}' is not found`));
  };
  add(cfg: ModelConfig, instances: ModelInstance[] = []): Scheduler {
    this.configs.set(cfg.name, cfg);
    const s = createScheduler(cfg, {
      modelName: cfg.name,
      version: 1,
      instances,
      infer: this.infer,
      clock: this.clock,
      getModelConfig: (n) => this.configs.get(n),
    });
    this.schedulers.set(cfg.name, s);
    return s;
  }
}

const pair = (id: string, a: number[], b: number[], rows = 1): InferRequest => ({
  id,
  model: 'E',
  inputs: [tensor('A', [rows, a.length / rows], a), tensor('B', [rows, b.length / rows], b)],
});

/**
 * The ensemble E: add_sub (A, B → sum, DIFF), then identity (sum → SUM), with `extra` on E's config
 * (its batching); `onAddSub` sees add_sub's batches, `last` serves identity.
 */
function addSubChain(router: Router, o: { extra?: Partial<ModelConfig>; onAddSub?: (b: readonly InferRequest[]) => void; last?: ModelInstance } = {}) {
  router.add(config({ name: 'add_sub', input: [input('INPUT0', [2]), input('INPUT1', [2])], output: [out('OUTPUT0', [2]), out('OUTPUT1', [2])] }), [
    instance(addSubFn, o.onAddSub),
  ]);
  router.add(config({ name: 'identity', input: [input('INPUT0', [2])] }), [o.last ?? instance(identityFn('identity'))]);
  return router.add(
    ensemble(
      'E',
      [step('add_sub', { INPUT0: 'A', INPUT1: 'B' }, { OUTPUT0: 'sum', OUTPUT1: 'DIFF' }), step('identity', { INPUT0: 'sum' }, { OUTPUT0: 'SUM' })],
      ['A', 'B'],
      ['SUM', 'DIFF'],
      o.extra,
    ),
  );
}

describe('per-step ensembles', () => {
  const chain = (router: Router) => addSubChain(router);

  it('routes a request through the DAG, each step through its own scheduler', async () => {
    const router = new Router();
    const e = chain(router);
    const res = await e.enqueue(pair('q1', [1, 2], [10, 20]));
    expect(res.model).toBe('E');
    expect(res.id).toBe('q1');
    const byName = Object.fromEntries(res.outputs.map((o) => [o.name, f32(o)]));
    expect(byName).toEqual({ SUM: [11, 22], DIFF: [-9, -18] });
    expect(router.calls.map((c) => c.model)).toEqual(['add_sub', 'identity']);
    expect(router.calls[0]!.outputs?.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
  });

  it('prefixes step errors with the ensemble name', async () => {
    const router = new Router();
    const e = chain(router);
    const err = await e.enqueue(pair('q', [666, 0], [0, 0])).then(() => { throw new Error('expected a failure'); }, (x: unknown) => x as InferError);
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toBe("in ensemble 'E', poisoned request in identity");
  });

  it('runs independent steps concurrently; first error wins after in-flight steps drain', async () => {
    const router = new Router();
    const left = manualInstance();
    const right = manualInstance();
    router.add(config({ name: 'left', input: [input('INPUT0', [2])] }), [left]);
    router.add(config({ name: 'right', input: [input('INPUT0', [2])] }), [right]);
    const e = router.add(
      ensemble('E', [step('left', { INPUT0: 'A' }, { OUTPUT0: 'L' }), step('right', { INPUT0: 'A' }, { OUTPUT0: 'R' })], ['A'], ['L', 'R'], {
        input: [input('A', [2])],
      }),
    );
    const res = settle(e.enqueue({ id: 'x', model: 'E', inputs: [tensor('A', [1, 2], [1, 2])] }));
    await flush();
    expect(left.calls).toHaveLength(1);
    expect(right.calls).toHaveLength(1);
    left.calls[0]!.reject(new InferError('UNAVAILABLE', 'left is down'));
    await flush();
    expect(res.done).toBe(false); // right still in flight
    right.calls[0]!.resolve();
    await flush();
    expect(res.error?.message).toBe("in ensemble 'E', left is down");
    expect(res.error?.code).toBe('UNAVAILABLE');
  });

  it('propagates cancellation to steps', async () => {
    const router = new Router();
    const slow = manualInstance();
    router.add(config({ name: 'slow', input: [input('INPUT0', [2])] }), [slow]);
    router.add(config({ name: 'identity', input: [input('INPUT0', [2])] }), [instance(identityFn('identity'))]);
    const e = router.add(
      ensemble('E', [step('slow', { INPUT0: 'A' }, { OUTPUT0: 'x' }), step('identity', { INPUT0: 'x' }, { OUTPUT0: 'Y' })], ['A'], ['Y'], {
        input: [input('A', [2])],
      }),
    );
    const ctl = new AbortController();
    const res = settle(e.enqueue({ id: 'c', model: 'E', inputs: [tensor('A', [1, 2], [1, 2])], signal: ctl.signal }));
    await flush();
    ctl.abort();
    await flush();
    expect(slow.calls[0]!.signal.aborted).toBe(true);
    expect(res.error?.code).toBe('CANCELLED');
    expect(router.calls.map((c) => c.model)).toEqual(['slow']);
  });

  it('max_inflight_requests bounds in-flight calls per step', async () => {
    const router = new Router();
    const inst = manualInstance();
    router.add(config({ name: 'slow', input: [input('INPUT0', [2])], dynamic_batching: dynamicBatching() }), [inst]);
    const cfg = ensemble('E', [step('slow', { INPUT0: 'A' }, { OUTPUT0: 'Y' })], ['A'], ['Y'], { input: [input('A', [2])] });
    cfg.ensemble_scheduling!.max_inflight_requests = 1;
    const e = router.add(cfg);
    const results = [1, 2, 3].map((v) => settle(e.enqueue({ id: `${v}`, model: 'E', inputs: [tensor('A', [1, 2], [v, v])] })));
    await flush();
    expect(router.calls).toHaveLength(1);
    inst.calls[0]!.resolve();
    await flush();
    expect(router.calls).toHaveLength(2);
    inst.calls[1]!.resolve();
    await flush();
    inst.calls[2]!.resolve();
    await flush();
    expect(results.map((r) => f32(r.value!.outputs[0]!)[0])).toEqual([1, 2, 3]);
  });

  it('nested ensembles work because steps re-enter infer', async () => {
    const router = new Router();
    chain(router);
    const outer = router.add(ensemble('OUTER', [step('E', { A: 'X', B: 'X' }, { SUM: 'S' })], ['X'], ['S']));
    const res = await outer.enqueue({ id: 'n', model: 'OUTER', inputs: [tensor('X', [1, 2], [3, 4])] });
    expect(f32(res.outputs[0]!)).toEqual([6, 8]);
    expect(res.outputs[0]!.name).toBe('S');
  });

  it('reports the deadlock message when an output can never be set', async () => {
    const router = new Router();
    router.add(config({ name: 'identity', input: [input('INPUT0', [2])] }), [instance(identityFn('identity'))]);
    const e = router.add(ensemble('E', [step('identity', { INPUT0: 'missing' }, { OUTPUT0: 'Y' })], ['A'], ['Y']));
    const err = await e.enqueue({ id: 'd', model: 'E', inputs: [tensor('A', [1, 2], [1, 2])] }).then(() => { throw new Error('expected a failure'); }, (x: unknown) => x as InferError);
    expect(err.message).toBe("in ensemble 'E', unexpected deadlock, at least one output is not set while no more ensemble steps can be made");
  });

  it('adapts batch dims between batching and non-batching models', async () => {
    const router = new Router();
    const seen: number[][] = [];
    router.add(config({ name: 'nobatch', max_batch_size: 0, input: [input('INPUT0', [2])] }), [
      instance((r) => (seen.push([...r.inputs[0]!.shape]), identityFn('nobatch')(r))),
    ]);
    router.add(config({ name: 'identity', input: [input('INPUT0', [2])] }), [instance((r) => (seen.push([...r.inputs[0]!.shape]), identityFn('identity')(r)))]);
    const e = router.add(
      ensemble('E', [step('nobatch', { INPUT0: 'A' }, { OUTPUT0: 'x' }), step('identity', { INPUT0: 'x' }, { OUTPUT0: 'Y' })], ['A'], ['Y'], {
        input: [input('A', [2])],
      }),
    );
    const res = await e.enqueue({ id: 'b', model: 'E', inputs: [tensor('A', [1, 2], [5, 6])] });
    expect(seen).toEqual([[2], [1, 2]]);
    expect(res.outputs[0]!.shape).toEqual([1, 2]);
  });
});

/** E pipeline-batched (preferred 4, 1 ms delay), identity served by `last`; add_sub's batches' row counts go to `stepBatches`. */
function pipelineOf(router: Router, stepBatches: number[][], last: ModelInstance) {
  return addSubChain(router, {
    extra: { dynamic_batching: dynamicBatching({ preferred_batch_size: [4], max_queue_delay_microseconds: 1000 }) },
    onAddSub: (b) => stepBatches.push(b.map((r) => r.inputs[0]!.shape[0]!)),
    last,
  });
}

describe('pipeline-batching ensembles', () => {
  function pipeline(router: Router, stepBatches: number[][]) {
    return pipelineOf(router, stepBatches, instance(identityFn('identity')));
  }

  it('concatenates a batch into one request through every step and splits rows back', async () => {
    const router = new Router();
    const stepBatches: number[][] = [];
    const e = pipeline(router, stepBatches);
    const results = [1, 2, 3, 4].map((v) => settle(e.enqueue(pair(`p${v}`, [v, v], [1, 1]))));
    await flush(10);
    expect(stepBatches).toEqual([[4]]); // one merged request of 4 rows
    expect(router.calls.map((c) => c.model)).toEqual(['add_sub', 'identity']);
    // Steps' own batchers must not wait out their queue delay again for a formed batch.
    expect(router.calls.map((c) => c.preformed)).toEqual([true, true]);
    expect(results.map((r) => r.value!.id)).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(results.map((r) => f32(r.value!.outputs.find((o) => o.name === 'SUM')!))).toEqual([
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
    ]);
  });

  it('bisects a failing batch so only the poisoned request fails', async () => {
    const router = new Router();
    const e = pipeline(router, []);
    const results = [1, 2, 665, 4].map((v) => settle(e.enqueue(pair(`p${v}`, [v, v], [1, 1]))));
    await flush(20);
    expect(results.map((r) => r.error?.message ?? 'ok')).toEqual(['ok', 'ok', "in ensemble 'E', poisoned request in identity", 'ok']);
    expect(f32(results[3]!.value!.outputs.find((o) => o.name === 'DIFF')!)).toEqual([3, 3]);
  });

  it('each request keeps its own parameters, priority and timeout: only requests that agree on them merge', async () => {
    const router = new Router();
    const seen: InferRequest[] = [];
    const e = addSubChain(router, {
      extra: { dynamic_batching: dynamicBatching({ preferred_batch_size: [6], max_queue_delay_microseconds: 1000 }) },
      onAddSub: (b) => seen.push(...b),
    });
    const semantics: Partial<InferRequest>[] = [
      { parameters: { lang: 'en' } },
      { parameters: { lang: 'fr' } },
      { parameters: { lang: 'en' } },
      { parameters: { lang: 'en' }, priority: 1 },
      { parameters: { lang: 'en' }, timeoutUs: 5000 },
      {},
    ];
    const results = semantics.map((extra, i) => settle(e.enqueue({ ...pair(`s${i}`, [i, i], [1, 1]), ...extra })));
    for (let k = 0; k < 5 && results.some((r) => !r.done); k++) {
      router.clock.advance(1000);
      await flush(10);
    }
    expect(results.map((r) => r.error?.message ?? 'ok')).toEqual(new Array(6).fill('ok'));
    // One step request per group of requests that agree; each carries the group's own semantics.
    const groups = seen.map((r) => ({ rows: r.inputs[0]!.shape[0], parameters: r.parameters, priority: r.priority, timeoutUs: r.timeoutUs }));
    expect(groups).toHaveLength(5);
    expect(groups).toEqual(
      expect.arrayContaining([
        { rows: 2, parameters: { lang: 'en' }, priority: undefined, timeoutUs: undefined },
        { rows: 1, parameters: { lang: 'fr' }, priority: undefined, timeoutUs: undefined },
        { rows: 1, parameters: { lang: 'en' }, priority: 1, timeoutUs: undefined },
        { rows: 1, parameters: { lang: 'en' }, priority: undefined, timeoutUs: 5000 },
        { rows: 1, parameters: undefined, priority: undefined, timeoutUs: undefined },
      ]),
    );
    expect(f32(results[2]!.value!.outputs.find((o) => o.name === 'SUM')!)).toEqual([3, 3]);
  });

  it('waits for the ensemble max_queue_delay before sending a partial batch', async () => {
    const router = new Router();
    const stepBatches: number[][] = [];
    const e = pipeline(router, stepBatches);
    const r = settle(e.enqueue(pair('solo', [1, 2], [3, 4])));
    await flush();
    expect(stepBatches).toEqual([]);
    router.clock.advance(1000);
    await flush(10);
    expect(stepBatches).toEqual([[1]]);
    expect(r.value!.outputs).toHaveLength(2);
  });

  it('pads variable-length ensemble inputs into one pipeline batch (tritium.pad.*)', async () => {
    const router = new Router();
    const seen: number[][] = [];
    router.add(config({ name: 'identity', input: [input('INPUT0', [-1])] }), [instance(identityFn('identity'), (b) => b.forEach((r) => seen.push([...r.inputs[0]!.shape])))]);
    const e = router.add(
      ensemble('E', [step('identity', { INPUT0: 'IDS' }, { OUTPUT0: 'OUT' })], ['IDS'], ['OUT'], {
        input: [input('IDS', [-1])],
        output: [out('OUT', [-1])],
        parameters: { 'tritium.pad.IDS': { string_value: '0' } },
        dynamic_batching: dynamicBatching({ preferred_batch_size: [3], max_queue_delay_microseconds: 1000 }),
      }),
    );
    const lengths = [1, 3, 2];
    const results = lengths.map((n, i) =>
      settle(e.enqueue({ id: `s${i}`, model: 'E', inputs: [tensor('IDS', [1, n], Array.from({ length: n }, () => i + 1))] })),
    );
    await flush(10);
    expect(seen).toEqual([[3, 3]]);
    expect(results.map((r) => f32(r.value!.outputs[0]!))).toEqual([
      [1, 0, 0],
      [2, 2, 2],
      [3, 3, 0],
    ]);
  });

  it('does not bisect errors that say nothing about the data', async () => {
    const router = new Router();
    let calls = 0;
    router.add(config({ name: 'down', input: [input('INPUT0', [2])] }), [
      instance(() => (calls++, new InferError('UNAVAILABLE', 'down for maintenance'))),
    ]);
    const e = router.add(
      ensemble('E', [step('down', { INPUT0: 'A' }, { OUTPUT0: 'Y' })], ['A'], ['Y'], {
        input: [input('A', [2])],
        dynamic_batching: dynamicBatching({ preferred_batch_size: [4], max_queue_delay_microseconds: 1000 }),
      }),
    );
    const results = [1, 2, 3, 4].map((v) => settle(e.enqueue({ id: `${v}`, model: 'E', inputs: [tensor('A', [1, 2], [v, v])] })));
    await flush(10);
    expect(calls).toBe(1);
    expect(results.map((r) => r.error?.message)).toEqual(new Array(4).fill("in ensemble 'E', down for maintenance"));
  });

  it('property: pipeline results equal per-request results; only poisoned requests fail', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ rows: fc.integer({ min: 1, max: 3 }), a: fc.integer({ min: -50, max: 50 }), poison: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        async (reqs) => {
          const router = new Router();
          const e = pipeline(router, []);
          const results = reqs.map((r, i) => {
            const a = Array.from({ length: r.rows * 2 }, (_, k) => (r.poison && k === 0 ? 665 : r.a + k));
            return settle(e.enqueue(pair(`q${i}`, a, new Array<number>(r.rows * 2).fill(1), r.rows)));
          });
          for (let k = 0; k < 10 && results.some((r) => !r.done); k++) {
            router.clock.advance(1000);
            await flush(10);
          }
          reqs.forEach((r, i) => {
            const res = results[i]!;
            if (r.poison) {
              expect(res.error?.message).toBe("in ensemble 'E', poisoned request in identity");
              return;
            }
            const a = Array.from({ length: r.rows * 2 }, (_, k) => r.a + k);
            expect(res.value!.id).toBe(`q${i}`);
            const sum = res.value!.outputs.find((o) => o.name === 'SUM')!;
            expect(sum.shape).toEqual([r.rows, 2]);
            expect(f32(sum)).toEqual(a.map((x) => x + 1));
            expect(f32(res.value!.outputs.find((o) => o.name === 'DIFF')!)).toEqual(a.map((x) => x - 1));
          });
        },
      ),
      { numRuns: 30 },
    );
  });
});

/**
 * The pipeline's hold (pipeline-hold.ts): a batch below the smallest preferred size waits while the
 * last step is busy, so the wave that just finished (coming back a moment later in a closed loop)
 * joins it instead of following as a second small batch.
 */
describe('pipeline-batching ensembles: holding small batches while the last step is busy', () => {
  const DELAY_US = 1000; // pipelineOf's delay
  function slowLastStep(router: Router) {
    const batches: number[][] = [];
    const last = manualInstance();
    const e = pipelineOf(router, batches, last);
    // A pipeline batch reaches add_sub as ONE merged request: its rows are the batch's.
    const firstStepRows = () => batches.flat();
    const send = (n: number) => Array.from({ length: n }, (_, i) => settle(e.enqueue(pair(`q${i}`, [i, i], [1, 1]))));
    return { e, last, firstStepRows, send };
  }

  /** The pipeline after its last step ran one batch for 5 ms (so its service time is known), now idle. */
  async function measuredOnce(router: Router) {
    const p = slowLastStep(router);
    p.send(4);
    await flush(10);
    router.clock.advance(5000);
    p.last.calls[0]!.resolve();
    await flush(10);
    return p;
  }

  /** measuredOnce, then two batches fill both pipeline slots. */
  async function busyPipeline(router: Router) {
    const p = await measuredOnce(router);
    p.send(4); // batch 2: in the last step
    p.send(4); // batch 3: waits for the last step (both pipeline slots now busy)
    await flush(10);
    expect(p.last.calls.filter((c) => !c.done)).toHaveLength(1);
    const waiting = p.send(2); // a small wave: waits for a slot, past its queue delay
    router.clock.advance(DELAY_US + 100);
    await flush(10);
    expect(p.firstStepRows()).toEqual([4, 4, 4]);
    // Batch 2 ends after 5 ms: a slot frees while batch 3 holds the last step.
    router.clock.advance(5000 - DELAY_US - 100);
    p.last.calls[1]!.resolve();
    await flush(10);
    return { ...p, waiting };
  }

  it('holds a small batch while the last step is busy; the returning wave joins it in one batch', async () => {
    const router = new Router();
    const p = await busyPipeline(router);
    expect(p.firstStepRows()).toEqual([4, 4, 4]); // held: not sent the moment the slot freed
    const returning = p.send(2);
    await flush(10);
    expect(p.firstStepRows()).toEqual([4, 4, 4, 4]); // 2 held + 2 returning, sent at once as the smallest preferred size
    for (let i = 0; i < 3; i++) {
      router.clock.advance(5000);
      for (const c of p.last.calls) c.resolve();
      await flush(10);
    }
    expect([...p.waiting, ...returning].every((r) => r.done && r.value)).toBe(true);
  });

  it('holds no longer than the max queue delay', async () => {
    const router = new Router();
    const p = await busyPipeline(router);
    router.clock.advance(DELAY_US - 1);
    await flush(10);
    expect(p.firstStepRows()).toEqual([4, 4, 4]);
    router.clock.advance(1);
    await flush(10);
    expect(p.firstStepRows()).toEqual([4, 4, 4, 2]);
  });

  it('sends a small batch at once when the last step is idle', async () => {
    const router = new Router();
    const p = await measuredOnce(router);
    p.send(2);
    router.clock.advance(DELAY_US);
    await flush(10);
    expect(p.firstStepRows()).toEqual([4, 2]);
  });
});
