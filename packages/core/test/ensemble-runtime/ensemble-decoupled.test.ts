import { describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped } from '../../src/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import type { EnsembleStep, InferRequest, InferResponse, ModelConfig, ResponseSink } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { Scheduler } from '../../src/scheduler/index.ts';
import { config, flush, identity, input } from '../scheduler/helpers.ts';

const out = (name: string) => ({ name, data_type: 'TYPE_FP32' as const, dims: [2], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false });
const f32 = (t: { data: Uint8Array }) => [...new Float32Array(t.data.slice().buffer)];
const tensor = (name: string, values: number[]) => tensorFromTyped(name, 'FP32', [1, values.length], new Float32Array(values));

/** Decoupled: sends `n` responses per request, the k-th holding INPUT0 + k, then completes. */
function repeatInstance(n: number): ModelInstance {
  return {
    execute: () => Promise.reject(new Error('decoupled')),
    async executeDecoupled(batch, sinks) {
      for (let k = 0; k < n; k++) {
        await Promise.resolve();
        batch.forEach((r, i) => sinks[i]!.response({ id: r.id, model: 'repeat', version: 1, outputs: [tensor('OUTPUT0', f32(r.inputs[0]!).map((x) => x + k))] }));
      }
      sinks.forEach((s) => s.complete());
    },
    dispose: () => Promise.resolve(),
  };
}
const identityInstance: ModelInstance = { execute: (b) => Promise.resolve({ results: identity(b) }), dispose: () => Promise.resolve() };

function step(model_name: string, input_map: Record<string, string>, output_map: Record<string, string>): EnsembleStep {
  return { model_name, model_version: -1, input_map, output_map, model_namespace: '' };
}

class Router {
  readonly schedulers = new Map<string, Scheduler>();
  readonly configs = new Map<string, ModelConfig>();
  readonly calls: string[] = [];
  infer = (r: InferRequest): Promise<InferResponse> => {
    this.calls.push(r.model);
    return this.schedulers.get(r.model)!.enqueue(r);
  };
  inferStream = (r: InferRequest, sink: ResponseSink): void => {
    this.calls.push(r.model);
    this.schedulers.get(r.model)!.enqueueStream!(r, sink);
  };
  add(cfg: ModelConfig, instances: ModelInstance[] = []): Scheduler {
    this.configs.set(cfg.name, cfg);
    const s = createScheduler(cfg, {
      modelName: cfg.name,
      version: 1,
      instances,
      infer: this.infer,
      inferStream: this.inferStream,
      getModelConfig: (n) => this.configs.get(n),
    });
    this.schedulers.set(cfg.name, s);
    return s;
  }
}

function collect(): ResponseSink & { values: number[][]; done?: InferError | 'ok' } {
  const sink = {
    values: [] as number[][],
    done: undefined as InferError | 'ok' | undefined,
    response: (r: InferResponse) => void sink.values.push(...r.outputs.map(f32)),
    complete: (e?: InferError) => void (sink.done = e ?? 'ok'),
  };
  return sink;
}

function setup(steps: EnsembleStep[], outputs: string[]) {
  const router = new Router();
  router.add(config({ name: 'repeat', input: [input('INPUT0', [2])], model_transaction_policy: { decoupled: true } }), [repeatInstance(3)]);
  router.add(config({ name: 'identity', input: [input('INPUT0', [2])] }), [identityInstance]);
  const e = router.add(
    config({ name: 'E', platform: 'ensemble', backend: '', input: [input('A', [2])], output: outputs.map(out), ensemble_scheduling: { step: steps, max_inflight_requests: 0 } }),
  );
  return { router, e };
}

describe('ensembles with decoupled composing models', () => {
  it('a decoupled last step yields one ensemble response per step response', async () => {
    const { e } = setup([step('identity', { INPUT0: 'A' }, { OUTPUT0: 'x' }), step('repeat', { INPUT0: 'x' }, { OUTPUT0: 'Y' })], ['Y']);
    const sink = collect();
    e.enqueueStream!({ id: 's', model: 'E', inputs: [tensor('A', [1, 2])] }, sink);
    await flush(10);
    expect(sink.values).toEqual([
      [1, 2],
      [2, 3],
      [3, 4],
    ]);
    expect(sink.done).toBe('ok');
    await expect(e.enqueue({ id: 'u', model: 'E', inputs: [tensor('A', [1, 2])] })).rejects.toThrow(
      "model 'E' is decoupled and sent 3 responses; use a streaming call",
    );
  });

  it('downstream steps run once per iteration of a decoupled step', async () => {
    const { e, router } = setup([step('repeat', { INPUT0: 'A' }, { OUTPUT0: 'x' }), step('identity', { INPUT0: 'x' }, { OUTPUT0: 'Y' })], ['Y']);
    const sink = collect();
    e.enqueueStream!({ id: 's', model: 'E', inputs: [tensor('A', [5, 5])] }, sink);
    await flush(10);
    expect(sink.values).toEqual([
      [5, 5],
      [6, 6],
      [7, 7],
    ]);
    expect(router.calls.filter((m) => m === 'identity')).toHaveLength(3);
  });

  it('outputs outside the decoupled branch are answered once', async () => {
    const { e } = setup([step('identity', { INPUT0: 'A' }, { OUTPUT0: 'Y' }), step('repeat', { INPUT0: 'A' }, { OUTPUT0: 'unused' })], ['Y']);
    const sink = collect();
    e.enqueueStream!({ id: 's', model: 'E', inputs: [tensor('A', [9, 9])] }, sink);
    await flush(10);
    expect(sink.values).toEqual([[9, 9]]);
    expect(sink.done).toBe('ok');
  });

  it('a failing step completes the stream with the prefixed error', async () => {
    const router = new Router();
    router.add(config({ name: 'repeat', input: [input('INPUT0', [2])], model_transaction_policy: { decoupled: true } }), [repeatInstance(2)]);
    router.add(config({ name: 'bad', input: [input('INPUT0', [2])] }), [
      { execute: (b) => Promise.resolve({ results: b.map(() => new InferError('INVALID_ARG', 'nope')) }), dispose: () => Promise.resolve() },
    ]);
    const e = router.add(
      config({
        name: 'E',
        platform: 'ensemble',
        backend: '',
        input: [input('A', [2])],
        output: [out('Y')],
        ensemble_scheduling: { step: [step('repeat', { INPUT0: 'A' }, { OUTPUT0: 'x' }), step('bad', { INPUT0: 'x' }, { OUTPUT0: 'Y' })], max_inflight_requests: 0 },
      }),
    );
    const sink = collect();
    e.enqueueStream!({ id: 's', model: 'E', inputs: [tensor('A', [1, 1])] }, sink);
    await flush(10);
    expect(sink.values).toEqual([]);
    expect((sink.done as InferError).message).toBe("in ensemble 'E', nope");
  });
});
