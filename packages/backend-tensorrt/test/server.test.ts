import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer, tensorFromTyped, typedView, type InferResponse, type Tensor } from '@tritium/core';
import { identityBackend } from '@tritium/core/testing';
import { tensorrtBackend } from '../src/index.ts';
import { TempDir, buildDouble, captureLog, doubleEngine, writeModel } from './helpers.ts';

const values = (t: Tensor) => Array.from(typedView(t) as ArrayLike<number>);
const out = (r: InferResponse, name: string): Tensor => r.outputs.find((o) => o.name === name)!;
const fp32 = (name: string, shape: number[], v: number[]) => tensorFromTyped(name, 'FP32', shape, Float32Array.from(v));

const ADD = doubleEngine({
  inputs: [
    { name: 'X', type: 0, dims: [-1, -1], profiles: [[[1, 1], [4, 4], [4, 16]]] },
    { name: 'Y', type: 0, dims: [-1, -1], profiles: [[[1, 1], [4, 4], [4, 16]]] },
  ],
  outputs: [{ name: 'Z', type: 0, dims: [-1, -1] }],
  op: 'add',
});

const IDENTITY = `name: "plain"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]`;

let dir: TempDir;
let shimPath: string;
beforeAll(() => {
  dir = new TempDir();
  shimPath = buildDouble(dir.root);
});
afterAll(() => dir.dispose());

describe('TensorRT models in an InferenceServer', () => {
  it('batches concurrent requests through the dynamic batcher into one engine run', async () => {
    const root = `${dir.root}/repo-batch`;
    // A preferred batch of 4 and a long queue delay: the 4 requests below leave as one batch as soon as they are all queued.
    writeModel(root, 'plan_add', ADD, 'platform: "tensorrt_plan"\nmax_batch_size: 4\ndynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 5000000 }');
    // No config.pbtxt at all: core finds model.plan, the backend completes the rest.
    writeModel(root, 'plan_auto', ADD);
    const server = new InferenceServer({ repositories: [root], backends: [tensorrtBackend({ shimPath, isolation: 'thread' }), identityBackend()], log: captureLog() });
    await server.start();
    try {
      expect(server.modelConfig('plan_auto')).toMatchObject({ backend: 'tensorrt', max_batch_size: 4 });
      const responses = await Promise.all(
        [0, 1, 2, 3].map((k) => server.infer({ id: `r${k}`, model: 'plan_add', inputs: [fp32('X', [1, 3], [k, k, k]), fp32('Y', [1, 3], [1, 2, 3])] })),
      );
      expect(responses.map((r) => values(out(r, 'Z')))).toEqual([0, 1, 2, 3].map((k) => [k + 1, k + 2, k + 3]));
      const [stats] = server.statistics('plan_add');
      expect(stats).toMatchObject({ inference_count: 4, execution_count: 1 });
    } finally {
      await server.stop();
    }
  });

  it('fails to load a TensorRT model where the shim is missing, naming it, and keeps serving other models', async () => {
    const root = `${dir.root}/repo-missing`;
    writeModel(root, 'plan_add', ADD, 'platform: "tensorrt_plan"');
    writeModel(root, 'plain', undefined, IDENTITY);
    const missing = `${dir.root}/not-built/libtritium_trt.so`;
    const server = new InferenceServer({
      repositories: [root],
      backends: [tensorrtBackend({ shimPath: missing }), identityBackend()],
      exitOnError: false,
      log: captureLog(),
    });
    await server.start();
    try {
      const index = await server.repositoryIndex();
      const plan = index.find((e) => e.name === 'plan_add')!;
      expect(plan.state).toBe('UNAVAILABLE');
      expect(plan.reason).toContain(`TensorRT backend unavailable: the TensorRT shim '${missing}' does not exist`);
      expect(plan.reason).toContain('libnvinfer.so.10');
      expect(server.modelReady('plain')).toBe(true);
      const r = await server.infer({ id: 'p', model: 'plain', inputs: [fp32('INPUT0', [1, 2], [5, 6])] });
      expect(values(out(r, 'OUTPUT0'))).toEqual([5, 6]);
      await expect(server.infer({ id: 'q', model: 'plan_add', inputs: [fp32('X', [1, 1], [1]), fp32('Y', [1, 1], [1])] })).rejects.toThrow(/plan_add/);
    } finally {
      await server.stop();
    }
  });
});
