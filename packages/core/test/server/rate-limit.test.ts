/**
 * The rate limiter through InferenceServer with real worker-hosted models: instances of two models
 * that share a resource never execute together beyond its count (checked at the instances, under the
 * limiter, with overlapping requests), while the same load without rate limiting does overlap.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { faultBackend } from '@tritium/core/testing';
import type { Backend, ModelInstance } from '../../src/backend/spi.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import type { InferenceServerOptions } from '../../src/server/inference-server-options.ts';
import { tensorFromTyped } from '../../src/tensor/tensor.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

/** Wraps a backend so every instance's executes are counted: the most that ever ran at once. */
function overlapProbe(inner: Backend): { backend: Backend; maxAtOnce: () => number } {
  let running = 0;
  let max = 0;
  const backend: Backend = {
    ...inner,
    async loadModel(spec) {
      const model = await inner.loadModel(spec);
      return {
        ...model,
        async createInstance(s) {
          const instance = await model.createInstance(s);
          const probed: ModelInstance = {
            get healthy() {
              return instance.healthy;
            },
            async execute(batch, signal, context) {
              max = Math.max(max, ++running);
              try {
                return await instance.execute(batch, signal, context);
              } finally {
                running--;
              }
            },
            dispose: () => instance.dispose(),
          };
          return probed;
        },
        dispose: () => model.dispose(),
      };
    },
  };
  return { backend, maxAtOnce: () => max };
}

const limited = (name: string) =>
  identityConfig(name)
    .replace('backend: "identity"', 'backend: "fault"')
    .replace('instance_group [ { kind: KIND_CPU count: 1 } ]', 'instance_group [ { kind: KIND_CPU count: 2 rate_limiter { resources [ { name: "GPU_MEMORY" count: 1 } ] } } ]');

const repos: string[] = [];
const servers: InferenceServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const r of repos) await removeRepo(r);
});

async function overlapUnder(options: Partial<InferenceServerOptions>): Promise<number> {
  const repo = await makeRepo({ a: { config: limited('a') }, b: { config: limited('b') } });
  repos.push(repo);
  const probe = overlapProbe(faultBackend());
  const server = new InferenceServer({ repositories: [repo], backends: [probe.backend], ...options });
  servers.push(server);
  await server.start();
  const input = tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array(4));
  const requests = Array.from({ length: 8 }, (_, i) =>
    server.infer({ id: `r${i}`, model: i % 2 ? 'a' : 'b', inputs: [input], parameters: { fault: 'delay:40' } }),
  );
  const answers = await Promise.all(requests);
  expect(answers).toHaveLength(8);
  expect(server.statistics('a')[0]!.inference_stats.success.count + server.statistics('b')[0]!.inference_stats.success.count).toBe(8);
  return probe.maxAtOnce();
}

describe('rate limiter', () => {
  it('never runs two instances that share a one-copy resource at once, across models', async () => {
    expect(await overlapUnder({ rateLimit: {} })).toBe(1);
  });

  it('an explicit --rate-limit-resource count of 2 lets two run at once, never three', async () => {
    expect(await overlapUnder({ rateLimit: { resources: [{ name: 'GPU_MEMORY', count: 2 }] } })).toBeLessThanOrEqual(2);
  });

  it('without rate limiting (the default) the same load overlaps', async () => {
    expect(await overlapUnder({})).toBeGreaterThan(1);
  });

  it('fails the load of a model whose instances need more than an explicit count allows', async () => {
    const repo = await makeRepo({ a: { config: limited('a') } });
    repos.push(repo);
    const server = new InferenceServer({ repositories: [repo], backends: [faultBackend()], rateLimit: { resources: [{ name: 'GPU_MEMORY', count: 0 }] }, exitOnError: false });
    servers.push(server);
    await server.start();
    expect(server.modelReady('a')).toBe(false);
    const index = await server.repositoryIndex();
    expect(index.find((m) => m.name === 'a')!.reason).toContain('Resource count for "GPU_MEMORY" is limited to 0');
  });
});
