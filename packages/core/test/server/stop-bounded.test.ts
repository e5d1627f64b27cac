/**
 * A stop always returns: past the exit timeout, a backend whose dispose never returns (an in-process
 * instance stuck in native code, a model.dispose waiting on something that never comes) is given a
 * bounded grace, logged by name, and left behind, so `--exit-timeout-secs` holds for an embedder's
 * `await server.stop()` too, not only for the CLI's hard exit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { captureLog, faultBackend } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { BACKEND_API_VERSION, type Backend, type ModelInstance } from '../../src/backend/spi.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped } from '../../src/tensor/tensor.ts';
import { settlesWithin } from '../../src/server/settles-within.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

/** In-process instances that answer (identity) but never finish disposing, nor does their model. */
function stuckDisposeBackend(): { backend: Backend; disposeCalls: string[] } {
  const disposeCalls: string[] = [];
  const never = () => new Promise<void>(() => {});
  const backend: Backend = {
    name: 'stuckdispose',
    apiVersion: BACKEND_API_VERSION,
    async loadModel() {
      return {
        async createInstance(spec): Promise<ModelInstance> {
          return {
            execute: async (batch) => ({ results: batch.map((r) => ({ id: r.id, model: r.model, version: 1, outputs: [{ ...r.inputs[0]!, name: 'Y' }] })) }),
            dispose: () => {
              disposeCalls.push(spec.name);
              return never();
            },
          } as ModelInstance;
        },
        dispose: never,
      };
    },
  };
  return { backend, disposeCalls };
}

const CONFIG = `name: "m"
backend: "stuckdispose"
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]`;

const repos: string[] = [];
afterEach(async () => {
  for (const r of repos.splice(0)) await removeRepo(r);
});

describe('stop with a backend that never finishes disposing', () => {
  it('returns after the exit timeout plus a bounded grace, naming the version left behind', async () => {
    const repo = await makeRepo({ m: { config: CONFIG } });
    repos.push(repo);
    const { backend, disposeCalls } = stuckDisposeBackend();
    const log = captureLog();
    const server = new InferenceServer({ repositories: [repo], backends: [backend], log });
    await server.start();
    const response = await server.infer({ id: 'a', model: 'm', inputs: [tensorFromTyped('X', 'FP32', [1], new Float32Array([1.5]))] });
    expect(response.outputs[0]!.name).toBe('Y');
    // Without the bound this never returns (the test runner's timeout fails it).
    await server.stop({ timeoutMs: 100 });
    expect(disposeCalls.sort()).toEqual(['m_0_0', 'm_0_1']);
    expect(log.lines).toContain("W 1 model version(s) still busy after 100 ms; stopping them");
    expect(log.lines.some((l) => /^E model 'm' version 1 did not finish disposing \d+ ms after being stopped; the server stops without waiting$/.test(l))).toBe(true);
    expect(server.isReady()).toBe(false);
    expect((await server.repositoryIndex())[0]).toMatchObject({ name: 'm', state: 'UNAVAILABLE', reason: 'unloaded' });
  }, 30_000);
});

describe('stop while model control is still running', () => {
  it('an unload draining a request that never ends holds no model control; the stop tears the version down at the exit timeout', async () => {
    const repo = await makeRepo({ hung: { config: identityConfig('hung').replace('"identity"', '"fault"') } });
    repos.push(repo);
    const log = captureLog();
    const server = new InferenceServer({ repositories: [repo], backends: [faultBackend()], modelControlMode: 'explicit', startupModels: ['hung'], log });
    await server.start();
    const stuck = server
      .infer({ id: 'n', model: 'hung', inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array(4))], parameters: { fault: 'never' } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // The unload waits for the request (Triton drains a version before unloading it): forever here,
    // but outside model control.
    const unloaded = server.unloadModel('hung').then(
      () => 'unloaded',
      (e: unknown) => e,
    );
    const stopped = server.stop({ timeoutMs: 300 });
    // Bounded by the test: before, stop() awaited the unload with no bound and this gave up after 20 s.
    expect(await settlesWithin(stopped, 20_000), 'stop() returned').toBe(true);
    expect(log.lines).not.toContain('W model control (a load, unload or poll) still running after 300 ms; the stop goes on without it');
    expect(log.lines).toContain('W 1 model version(s) still busy after 300 ms; stopping them');
    // The request was failed by the teardown, and the unload finished with it.
    expect(await settlesWithin(Promise.all([stuck, unloaded]), 20_000), 'request and unload settled').toBe(true);
    expect(InferError.is(await stuck)).toBe(true);
    expect(await unloaded).toBe('unloaded');
    expect(server.isReady()).toBe(false);
  }, 60_000);
});
