import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityBackend } from '@tritium/core/testing';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped, typedView } from '../../src/tensor/tensor.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

describe('InferenceServer smoke', () => {
  let repo: string;
  let server: InferenceServer;
  beforeAll(async () => {
    repo = await makeRepo({ m: { config: identityConfig('m') } });
    server = new InferenceServer({ repositories: [repo], backends: [identityBackend()] });
    await server.start();
  });
  afterAll(async () => {
    await server?.stop();
    await removeRepo(repo);
  });

  it('infers through a real worker', async () => {
    const input = tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]));
    const res = await server.infer({ id: 'a', model: 'm', inputs: [input] });
    expect([...(typedView(res.outputs[0]!) as Float32Array)]).toEqual([1, 2, 3, 4]);
    expect(server.isReady()).toBe(true);
  });
});
