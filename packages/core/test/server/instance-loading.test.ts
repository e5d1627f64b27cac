/**
 * Instance start-up order (Triton's parallel_instance_loading backend attribute): a backend that
 * declares `parallelInstanceLoading` gets a model's instances created at once, up to the server's
 * bound on concurrent starts (--model-load-thread-count, 4), models taking turns; others get them
 * one after another. A failing instance fails the load and the started ones are disposed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BACKEND_API_VERSION, type Backend, type ModelInstance } from '../../src/backend/spi.ts';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { makeRepo, removeRepo } from './repo-fixture.ts';

/** A backend whose instances take a while to start and record how many start at once. */
function slowStartBackend(parallel: boolean, failInstance?: string) {
  const stats = { running: 0, maxRunning: 0, disposed: [] as string[], started: [] as string[] };
  const backend: Backend = {
    name: 'slowstart',
    apiVersion: BACKEND_API_VERSION,
    parallelInstanceLoading: parallel,
    async loadModel() {
      return {
        async createInstance(spec): Promise<ModelInstance> {
          stats.started.push(spec.name);
          stats.running++;
          stats.maxRunning = Math.max(stats.maxRunning, stats.running);
          await new Promise((r) => setTimeout(r, 30));
          stats.running--;
          if (spec.name === failInstance) throw new InferError('INTERNAL', `instance ${spec.name} failed to start`);
          return {
            execute: async (batch) => ({ results: batch.map((r) => ({ id: r.id, model: r.model, version: 1, outputs: [] })) }),
            dispose: async () => void stats.disposed.push(spec.name),
          } as ModelInstance;
        },
        async dispose() {},
      };
    },
  };
  return { backend, stats };
}

const CONFIG = `name: "m"
backend: "slowstart"
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 4 } ]`;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function start(
  backend: Backend,
  checkOnly = false,
  models: Record<string, { config: string }> = { m: { config: CONFIG } },
  instanceStarts?: number,
): Promise<{ server: InferenceServer; error?: InferError }> {
  const repo = await makeRepo(models);
  const server = new InferenceServer({ repositories: [repo], backends: [backend], checkOnly, ...(instanceStarts ? { instanceStarts } : {}) });
  cleanup.push(async () => {
    await server.stop();
    await removeRepo(repo);
  });
  const error = await server.start().then(
    () => undefined,
    (e: unknown) => e as InferError,
  );
  return { server, ...(error ? { error } : {}) };
}

describe('instance loading', () => {
  it('starts all instances of a model at once when the backend allows it', async () => {
    const { backend, stats } = slowStartBackend(true);
    const { server } = await start(backend);
    expect(server.modelReady('m')).toBe(true);
    expect(stats.maxRunning).toBe(4);
  });

  it('starts at most --model-load-thread-count instances at once in the server, models taking turns', async () => {
    const { backend, stats } = slowStartBackend(true);
    const big = CONFIG.replace('count: 4', 'count: 12');
    const small = CONFIG.replace('name: "m"', 'name: "small"').replace('count: 4', 'count: 1');
    const { server } = await start(backend, false, { m: { config: big }, small: { config: small } }, 3);
    expect(server.modelReady('m') && server.modelReady('small')).toBe(true);
    expect(stats.maxRunning).toBe(3);
    // The small model's one instance did not wait behind all twelve of the big one's.
    expect(stats.started.indexOf('small_0_0')).toBeLessThan(stats.started.indexOf('m_0_11'));
    expect(stats.started).toHaveLength(13);
  });

  it('starts them one after another otherwise', async () => {
    const { backend, stats } = slowStartBackend(false);
    const { server } = await start(backend);
    expect(server.modelReady('m')).toBe(true);
    expect(stats.maxRunning).toBe(1);
  });

  it('fails the load when one instance fails, disposing the instances that started', async () => {
    const { backend, stats } = slowStartBackend(true, 'm_0_2');
    const { error } = await start(backend);
    expect(error?.message).toContain("failed to load 'm' version 1: Internal: instance m_0_2 failed to start");
    expect(stats.disposed.sort()).toEqual(['m_0_0', 'm_0_1', 'm_0_3']);
  });

  it('check only (tritium config): the backend loads the version, no instance starts, requests are refused', async () => {
    const { backend, stats } = slowStartBackend(true);
    let loads = 0;
    const counting: Backend = { ...backend, loadModel: (spec) => (loads++, backend.loadModel(spec)) };
    const { server } = await start(counting, true);
    expect(loads).toBe(1);
    expect(stats.maxRunning).toBe(0);
    expect(server.modelConfig('m').instance_group[0]!.count).toBe(4);
    const x = { name: 'X', datatype: 'FP32' as const, shape: [1], data: new Uint8Array(4) };
    await expect(server.infer({ id: '1', model: 'm', inputs: [x] })).rejects.toThrow("model 'm' was loaded to check its configuration only");
  });
});
