/**
 * The response cache through InferenceServer and real worker-hosted models: a repeated request is
 * answered without executing, with Triton's statistics (cache_hit / cache_miss, success counted,
 * inference and execution counts unchanged); concurrent identical requests are all answered
 * correctly; an ensemble is cached at the top level; the byte size bounds what is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityBackend } from '@tritium/core/testing';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped, typedView, type Tensor } from '../../src/tensor/tensor.ts';
import type { InferRequest } from '../../src/types.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

const f32 = (name: string, values: number[]): Tensor => tensorFromTyped(name, 'FP32', [1, values.length], new Float32Array(values));
const request = (model: string, values: number[], input = 'INPUT0'): InferRequest => ({ id: 'r', model, inputs: [f32(input, values)] });

const ENSEMBLE = `name: "ens"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
response_cache { enable: true }
ensemble_scheduling { step [
  { model_name: "m" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } }
] }`;

const repos: string[] = [];
const servers: InferenceServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const r of repos) await removeRepo(r);
});

async function serve(models: Parameters<typeof makeRepo>[0], responseCacheBytes: number): Promise<InferenceServer> {
  const repo = await makeRepo(models);
  repos.push(repo);
  const server = new InferenceServer({ repositories: [repo], backends: [identityBackend()], responseCacheBytes });
  servers.push(server);
  await server.start();
  return server;
}

const stats = (server: InferenceServer, model: string) => server.statistics(model)[0]!;

describe('response cache', () => {
  let server: InferenceServer;
  beforeAll(async () => {
    server = await serve(
      {
        cached: { config: identityConfig('cached', { extra: 'response_cache { enable: true }' }) },
        plain: { config: identityConfig('plain') },
        m: { config: identityConfig('m') },
        ens: { config: ENSEMBLE },
      },
      1 << 20,
    );
  });

  it('answers a repeated request from the cache without executing the model', async () => {
    const first = await server.infer(request('cached', [1, 2, 3, 4]));
    const second = await server.infer({ ...request('cached', [1, 2, 3, 4]), id: 'again' });
    expect([...typedView(second.outputs[0]!)]).toEqual([1, 2, 3, 4]);
    expect(second.outputs).toEqual(first.outputs);
    expect(second.id).toBe('again');
    const s = stats(server, 'cached');
    expect(s.execution_count).toBe(1);
    expect(s.inference_count).toBe(1);
    expect(s.inference_stats.success.count).toBe(2);
    expect(s.inference_stats.cache_hit.count).toBe(1);
    expect(s.inference_stats.cache_miss.count).toBe(1);
    // Other inputs are another answer.
    const other = await server.infer(request('cached', [5, 6, 7, 8]));
    expect([...typedView(other.outputs[0]!)]).toEqual([5, 6, 7, 8]);
    expect(stats(server, 'cached').execution_count).toBe(2);
  });

  it('leaves models that do not enable it alone', async () => {
    await server.infer(request('plain', [1, 1, 1, 1]));
    await server.infer(request('plain', [1, 1, 1, 1]));
    const s = stats(server, 'plain');
    expect(s.inference_count).toBe(2);
    expect(s.inference_stats.cache_hit.count).toBe(0);
    expect(server.metrics().find((m) => m.model === 'plain')!.cache).toBeUndefined();
  });

  it('answers concurrent identical requests each with the right outputs', async () => {
    const values = [9, 8, 7, 6];
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => server.infer({ ...request('cached', values), id: `c${i}` })));
    for (const [i, a] of answers.entries()) {
      expect(a.id).toBe(`c${i}`);
      expect([...typedView(a.outputs[0]!)]).toEqual(values);
    }
    const before = stats(server, 'cached');
    await server.infer(request('cached', values));
    const after = stats(server, 'cached');
    expect(after.execution_count).toBe(before.execution_count);
    expect(after.inference_stats.cache_hit.count).toBe(before.inference_stats.cache_hit.count + 1);
    const metrics = server.metrics().find((m) => m.model === 'cached')!;
    expect(metrics.cache!.hits).toBe(after.inference_stats.cache_hit.count);
    expect(metrics.cache!.misses).toBe(after.inference_stats.cache_miss.count);
  });

  it('caches an ensemble at the top level: a hit sends nothing to its composing model', async () => {
    const first = await server.infer(request('ens', [4, 3, 2, 1], 'IN'));
    const executed = stats(server, 'm').execution_count;
    const second = await server.infer(request('ens', [4, 3, 2, 1], 'IN'));
    expect(second.outputs).toEqual(first.outputs);
    expect(stats(server, 'm').execution_count).toBe(executed);
    expect(stats(server, 'ens').inference_stats.cache_hit.count).toBe(1);
  });

  it('serves a hit to a streaming call too', async () => {
    const responses: unknown[] = [];
    const hits = stats(server, 'cached').inference_stats.cache_hit.count;
    const done = new Promise<unknown>((resolve) =>
      server.inferStream(request('cached', [1, 2, 3, 4]), { response: (r) => void responses.push(r), complete: (e) => resolve(e) }),
    );
    expect(await done).toBeUndefined();
    expect(responses).toHaveLength(1);
    expect(stats(server, 'cached').inference_stats.cache_hit.count).toBe(hits + 1);
  });
});

describe('response cache size', () => {
  it('keeps no more than its byte size: the least recently used answer is evicted and runs again', async () => {
    const big = (fill: number) => new Array(400).fill(fill); // 1600 bytes of output per answer
    const server = await serve({ cached: { config: identityConfig('cached', { dims: '[ -1 ]', extra: 'response_cache { enable: true }' }) } }, 4096);
    await server.infer(request('cached', big(1)));
    await server.infer(request('cached', big(2)));
    await server.infer(request('cached', big(2))); // hit
    expect(stats(server, 'cached').execution_count).toBe(2);
    await server.infer(request('cached', big(3))); // evicts the answer for 1
    await server.infer(request('cached', big(1))); // runs again
    const s = stats(server, 'cached');
    expect(s.execution_count).toBe(4);
    expect(s.inference_stats.cache_hit.count).toBe(1);
  });
});
