/**
 * The tracer SPI through a real InferenceServer (worker-hosted identity models): the activities
 * Triton records, in order, for a plain model, a per-step ensemble (one child trace per step) and a
 * pipeline-batched ensemble (each carried request gets the steps under its own trace, linked to the
 * others of its batch); the compute the trace shows equals the statistics'; composing models count
 * one request per ensemble request in pipeline mode, the first step's queue holding the ensemble
 * batcher's wait; the ensemble's compute is the sum of its steps'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultBackend, identityBackend } from '@tritium/core/testing';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped, type Tensor } from '../../src/tensor/tensor.ts';
import type { RequestTrace, TraceActivity } from '../../src/trace/request-trace.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

interface Recorded {
  id: number;
  parent: number;
  model?: string;
  version?: number;
  events: [TraceActivity, number][];
  links: number[];
  released: boolean;
}

/** A RequestTrace that records everything (what a server-side exporter would receive). */
function recorder(): { root(): RequestTrace; all: Recorded[] } {
  const all: Recorded[] = [];
  const make = (parent: number): RequestTrace => {
    const r: Recorded = { id: all.length + 1, parent, events: [], links: [], released: false };
    all.push(r);
    const trace: RequestTrace & { rec: Recorded } = {
      rec: r,
      setModel(model, version) {
        r.model = model;
        r.version = version;
      },
      report(activity, ns) {
        r.events.push([activity, ns]);
      },
      tensors: false,
      reportTensor() {},
      spawnChild: () => make(r.id),
      linkBatch(batch) {
        r.links = batch.map((t) => (t as RequestTrace & { rec: Recorded }).rec.id).filter((id) => id !== r.id);
      },
      release() {
        r.released = true;
      },
    };
    return trace;
  };
  return { root: () => make(0), all };
}

const f32 = (name: string, rows: number): Tensor => tensorFromTyped(name, 'FP32', [rows, 4], new Float32Array(rows * 4).fill(1));

const TWO_STEPS = (name: string, extra = '') => `name: "${name}"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
${extra}
ensemble_scheduling { step [
  { model_name: "a" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "b" model_version: -1 input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUT" } }
] }`;

const ORDER: TraceActivity[] = ['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END'];

function expectOrdered(r: Recorded, names: TraceActivity[]): void {
  expect(r.events.map(([n]) => n)).toEqual(names);
  for (let i = 1; i < r.events.length; i++) expect(r.events[i]![1]).toBeGreaterThanOrEqual(r.events[i - 1]![1]);
}

const at = (r: Recorded, name: TraceActivity): number => r.events.find(([n]) => n === name)![1];

describe('tracer SPI', () => {
  let repo: string;
  let server: InferenceServer;
  beforeAll(async () => {
    repo = await makeRepo({
      a: { config: identityConfig('a', { extra: 'dynamic_batching { }' }) },
      b: { config: identityConfig('b', { extra: 'dynamic_batching { }' }) },
      ens: { config: TWO_STEPS('ens') },
      pipe: { config: TWO_STEPS('pipe', 'dynamic_batching { max_queue_delay_microseconds: 200000 preferred_batch_size: [ 3 ] }') },
      caller: { config: identityConfig('caller').replace('"identity"', '"fault"') },
    });
    server = new InferenceServer({ repositories: [repo], backends: [identityBackend(), faultBackend()] });
    await server.start();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await removeRepo(repo);
  });

  it('records Triton activities for a plain model, consistent with its statistics', async () => {
    const rec = recorder();
    const before = server.statistics('a')[0]!.inference_stats;
    await server.infer({ id: 'r1', model: 'a', inputs: [f32('INPUT0', 1)], trace: rec.root() });
    const after = server.statistics('a')[0]!.inference_stats;
    expect(rec.all).toHaveLength(1);
    const t = rec.all[0]!;
    expect(t).toMatchObject({ model: 'a', version: 1, released: true });
    expectOrdered(t, ORDER);
    // One request: the trace's compute spans are exactly what the statistics added.
    expect(at(t, 'COMPUTE_INPUT_END') - at(t, 'COMPUTE_START')).toBe(after.compute_input.ns - before.compute_input.ns);
    expect(at(t, 'COMPUTE_OUTPUT_START') - at(t, 'COMPUTE_INPUT_END')).toBe(after.compute_infer.ns - before.compute_infer.ns);
    expect(at(t, 'COMPUTE_END') - at(t, 'COMPUTE_OUTPUT_START')).toBe(after.compute_output.ns - before.compute_output.ns);
    expect(at(t, 'COMPUTE_START') - at(t, 'QUEUE_START')).toBe(after.queue.ns - before.queue.ns);
  });

  it('gives every step of a per-step ensemble a child trace; the ensemble computes the sum of its steps', async () => {
    const rec = recorder();
    const ensBefore = server.statistics('ens')[0]!;
    await server.infer({ id: 'e1', model: 'ens', inputs: [f32('IN', 2)], trace: rec.root() });
    const [root, ...children] = rec.all;
    expect(root).toMatchObject({ model: 'ens', parent: 0, released: true });
    expectOrdered(root!, ['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    expect(children.map((c) => [c.model, c.parent])).toEqual([
      ['a', root!.id],
      ['b', root!.id],
    ]);
    for (const c of children) {
      expectOrdered(c, ORDER);
      expect(at(c, 'REQUEST_START')).toBeGreaterThanOrEqual(at(root!, 'QUEUE_START'));
      expect(at(c, 'REQUEST_END')).toBeLessThanOrEqual(at(root!, 'REQUEST_END'));
    }
    const ens = server.statistics('ens')[0]!;
    const stepsCompute = children.reduce((n, c) => n + (at(c, 'COMPUTE_END') - at(c, 'COMPUTE_START')), 0);
    const ensCompute = (['compute_input', 'compute_infer', 'compute_output'] as const).reduce(
      (n, k) => n + ens.inference_stats[k].ns - ensBefore.inference_stats[k].ns,
      0,
    );
    expect(ensCompute).toBe(stepsCompute);
    expect(ens.execution_count - ensBefore.execution_count).toBe(1);
    expect(ens.inference_count - ensBefore.inference_count).toBe(2);
  });

  it('pipeline batching: each carried request counts at every step and traces the steps as its own children', async () => {
    const rec = recorder();
    const stats = () => ({ a: server.statistics('a')[0]!, b: server.statistics('b')[0]!, pipe: server.statistics('pipe')[0]! });
    const before = stats();
    // Three requests fill the preferred batch of 3: one pipeline batch carries them all.
    await Promise.all(
      [1, 2, 3].map((i) => server.infer({ id: `p${i}`, model: 'pipe', inputs: [f32('IN', 1)], trace: i < 3 ? rec.root() : undefined })),
    );
    const after = stats();
    for (const m of ['a', 'b'] as const) {
      // Triton counts one request per ensemble request at each step (not one per pipeline batch) ...
      expect(after[m].inference_stats.success.count - before[m].inference_stats.success.count).toBe(3);
      // ... and the batch as what it is: executions of 3 rows.
      expect(after[m].inference_count - before[m].inference_count).toBe(3);
      expect(after[m].execution_count - before[m].execution_count).toBeLessThanOrEqual(3);
    }
    expect(after.pipe.inference_stats.success.count - before.pipe.inference_stats.success.count).toBe(3);
    // The ensemble batcher's wait (the requests waited for each other) is in the first step's queue.
    const pipeQueue = after.pipe.inference_stats.queue.ns - before.pipe.inference_stats.queue.ns;
    const aQueue = after.a.inference_stats.queue.ns - before.a.inference_stats.queue.ns;
    expect(aQueue).toBeGreaterThanOrEqual(pipeQueue);

    const roots = rec.all.filter((r) => r.parent === 0);
    expect(roots.map((r) => r.model)).toEqual(['pipe', 'pipe']);
    for (const root of roots) {
      expect(root.released).toBe(true);
      expect(root.links).toEqual(roots.filter((o) => o !== root).map((o) => o.id));
      const children = rec.all.filter((c) => c.parent === root.id);
      expect(children.map((c) => c.model)).toEqual(['a', 'b']);
      for (const c of children) expectOrdered(c, ORDER);
    }
  });

  it("a BLS call made during a traced execute is a child of that request's trace; TENSORS reports tensors", async () => {
    const rec = recorder();
    await server.infer({ id: 'bls', model: 'caller', inputs: [f32('INPUT0', 1)], parameters: { fault: 'bls:a' }, trace: rec.root() });
    const [root, child] = rec.all;
    expect(root).toMatchObject({ model: 'caller', released: true });
    expect(child).toMatchObject({ model: 'a', parent: root!.id, released: true });
    expectOrdered(child!, ORDER);
    // The call happened inside the caller's execute.
    expect(at(child!, 'REQUEST_START')).toBeGreaterThanOrEqual(at(root!, 'COMPUTE_START'));
    expect(at(child!, 'REQUEST_END')).toBeLessThanOrEqual(at(root!, 'REQUEST_END'));

    const tensors: string[] = [];
    const t = { ...rec.root(), tensors: true, reportTensor: (activity: string, tensor: { name: string }) => void tensors.push(`${activity}:${tensor.name}`) };
    await server.infer({ id: 'tensors', model: 'a', inputs: [f32('INPUT0', 1)], trace: t as RequestTrace });
    expect(tensors).toEqual(['TENSOR_QUEUE_INPUT:INPUT0', 'TENSOR_BACKEND_OUTPUT:OUTPUT0']);
  });

  it('a request that is not traced records nothing and a routing failure releases the trace', async () => {
    const rec = recorder();
    await expect(server.infer({ id: 'x', model: 'nosuch', inputs: [], trace: rec.root() })).rejects.toThrow(/unknown model/);
    expect(rec.all[0]).toMatchObject({ released: true, events: [] });
  });
});
