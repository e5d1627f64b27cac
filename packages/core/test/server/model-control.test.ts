/**
 * Model control modes: none (load API refused), explicit (load/unload, dependents, overrides) and
 * poll (new / changed / removed models and versions, failed reloads) — including the reload test:
 * a version swapped while 1,000 requests run, with zero failures. Real worker-hosted backends.
 */
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { faultBackend, identityBackend } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped } from '../../src/tensor/tensor.ts';
import type { InferRequest } from '../../src/types.ts';
import { identityConfig, makeRepo, removeRepo, writeModels } from './repo-fixture.ts';

const repos: string[] = [];
const servers: InferenceServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  for (const r of repos) await removeRepo(r);
});

async function serve(models: Parameters<typeof makeRepo>[0], options: Partial<ConstructorParameters<typeof InferenceServer>[0]>) {
  const repo = await makeRepo(models);
  repos.push(repo);
  const server = new InferenceServer({ repositories: [repo], backends: [identityBackend()], ...options });
  servers.push(server);
  await server.start();
  return { repo, server };
}

const request = (model: string, extra: Partial<InferRequest> = {}): InferRequest => ({
  id: 'c',
  model,
  inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]))],
  ...extra,
});

async function errorOf(p: Promise<unknown>): Promise<InferError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(InferError.is(e), `expected an InferError, got ${String(e)}`).toBe(true);
  return e as InferError;
}

const ENSEMBLE = (composing: string) => `name: "ens"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [ { model_name: "${composing}" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }`;

describe('model control: none', () => {
  it('refuses load and unload with Triton message', async () => {
    const { server } = await serve({}, {});
    for (const p of [server.loadModel('m'), server.unloadModel('m')]) {
      const e = await errorOf(p);
      expect(e.code).toBe('UNAVAILABLE');
      expect(e.message).toBe('explicit model load / unload is not allowed if polling is enabled');
    }
    expect(server.isReady()).toBe(true);
  });
});

describe('model control: explicit', () => {
  it('loads only the startup models, then loads and unloads through the API', async () => {
    const { server } = await serve(
      { m: { config: identityConfig('m') }, m2: { config: identityConfig('m2') }, ens: { config: ENSEMBLE('m2') } },
      { modelControlMode: 'explicit', startupModels: ['m'] },
    );
    expect((await server.infer(request('m'))).model).toBe('m');
    expect((await errorOf(server.infer(request('m2')))).message).toBe("Request for unknown model: 'm2' is not found");
    expect((await server.repositoryIndex()).find((e) => e.name === 'ens')).toEqual({ name: 'ens', version: '', state: 'UNKNOWN', reason: '' });

    // Loading an ensemble loads the composing models it names.
    await server.loadModel('ens');
    expect(server.modelReady('m2')).toBe(true);
    expect((await server.infer({ id: 'e', model: 'ens', inputs: [tensorFromTyped('IN', 'FP32', [1, 4], new Float32Array(4))] })).model).toBe('ens');

    // unload_dependents also unloads composing models nobody loaded by name.
    await server.unloadModel('ens', { unloadDependents: true });
    expect(server.modelReady('ens')).toBe(false);
    expect(server.modelReady('m2')).toBe(false);
    expect(server.modelReady('m')).toBe(true);

    await server.unloadModel('m');
    expect((await errorOf(server.infer(request('m')))).message).toBe("Request for unknown model: 'm' has no available versions");
    const v1 = await errorOf(server.infer(request('m', { version: 1 })));
    expect(v1.code).toBe('UNAVAILABLE');
    expect(v1.message).toBe("Request for unknown model: 'm' version 1 is not at ready state");
    expect((await server.repositoryIndex()).find((e) => e.name === 'm')).toEqual({ name: 'm', version: '1', state: 'UNAVAILABLE', reason: 'unloaded' });
    expect(server.isReady()).toBe(true);

    // A config override replaces config.pbtxt for this load.
    const override = JSON.stringify({
      name: 'm',
      backend: 'identity',
      max_batch_size: 2,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
    });
    await server.loadModel('m', { configJson: override });
    expect(server.modelConfig('m').max_batch_size).toBe(2);
    expect((await server.infer(request('m'))).version).toBe(1);
  });

  it('reports load errors as Triton words them', async () => {
    const { server } = await serve(
      { broken: { config: identityConfig('broken').replace('max_batch_size: 8', 'max_batch_size: -1') } },
      { modelControlMode: 'explicit' },
    );
    const missing = await errorOf(server.loadModel('nosuch'));
    expect(missing.message).toBe("load failed for model 'nosuch': failed to poll model 'nosuch': model not found in any model repository.\n");
    const broken = await errorOf(server.loadModel('broken'));
    expect(broken.code).toBe('INVALID_ARG');
    expect(broken.message).toMatch(/^load failed for model 'broken': failed to read model directory 'broken': .*max_batch_size/);
    expect((await errorOf(server.loadModel('../etc'))).message).toBe(
      "invalid model name '../etc', model name must not contain path traversal characters",
    );
    const bad = await errorOf(server.loadModel('broken', { configJson: '{not json' }));
    expect(bad.message).toMatch(/Invalid config override: /);
    const files = await errorOf(server.loadModel('broken', { configJson: '{}', files: { 'file:1/model.bin': new Uint8Array(1) } }));
    expect(files.code).toBe('UNSUPPORTED');
  });

  it('writes file overrides inside a private folder only', async () => {
    const { server } = await serve({}, { modelControlMode: 'explicit', allowModelFileOverride: true });
    const config = JSON.stringify({
      backend: 'identity',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
    });
    const escape = await errorOf(server.loadModel('fm', { configJson: config, files: { 'file:../../evil': new Uint8Array(1) } }));
    expect(escape.message).toMatch(/Invalid file parameter 'file:..\/..\/evil' with normalized path '.*' must stay within model directory\./);
    const noConfig = await errorOf(server.loadModel('fm', { files: { 'file:1/model.bin': new Uint8Array(1) } }));
    expect(noConfig.message).toContain("Load parameter 'config' must be specified for model file override");
    await server.loadModel('fm', { configJson: config, files: { 'file:1/model.bin': new Uint8Array([1]) } });
    expect((await server.infer(request('fm'))).model).toBe('fm');
  });

  it('keeps the uploaded files of a version that keeps serving after a failed reload, and drops replaced ones', async () => {
    const { server } = await serve({ up: { config: identityConfig('up') } }, { modelControlMode: 'explicit', allowModelFileOverride: true });
    const config = (backend: string) =>
      JSON.stringify({
        backend,
        max_batch_size: 8,
        input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }],
        output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
      });
    // This server's upload folders, each with the bytes of its 1/model.bin.
    const uploads = async (): Promise<Map<string, number>> => {
      const held = (await readdir(os.tmpdir())).filter((n) => n.startsWith(`tritium-override-${process.pid}-`));
      return new Map(await Promise.all(held.map(async (n) => [n, (await readFile(path.join(os.tmpdir(), n, '1', 'model.bin')))[0]!] as const)));
    };
    const before = new Set((await uploads()).keys());
    const ours = async () => [...(await uploads())].filter(([n]) => !before.has(n)).map(([, byte]) => byte);

    await server.loadModel('up', { configJson: config('identity'), files: { 'file:1/model.bin': new Uint8Array([1]) } });
    expect(await ours()).toEqual([1]);
    // A reload that fails keeps version 1 serving, and with it the files its instances restart
    // from (they were deleted before the new load, so the next crash could not restart it).
    const failed = await errorOf(server.loadModel('up', { configJson: config('no_such_backend'), files: { 'file:1/model.bin': new Uint8Array([2]) } }));
    expect(failed.message).toContain('no_such_backend');
    expect((await server.infer(request('up'))).model).toBe('up');
    expect(await ours()).toEqual([1]);
    // A reload that succeeds replaces them.
    await server.loadModel('up', { configJson: config('identity'), files: { 'file:1/model.bin': new Uint8Array([3]) } });
    expect(await ours()).toEqual([3]);
    await server.unloadModel('up');
    expect(await ours()).toEqual([]);
    // Replaced by the repository's own files (a load with no override) counts too.
    await server.loadModel('up', { configJson: config('identity'), files: { 'file:1/model.bin': new Uint8Array([4]) } });
    expect(await ours()).toEqual([4]);
    await server.loadModel('up');
    expect((await server.infer(request('up'))).model).toBe('up');
    expect(await ours()).toEqual([]);
  });

  it('lists a model loaded only through the load API in the repository index until it is unloaded', async () => {
    const { server } = await serve({ m: { config: identityConfig('m') } }, { modelControlMode: 'explicit', allowModelFileOverride: true });
    const config = JSON.stringify({
      backend: 'identity',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
    });
    await server.loadModel('api_only', { configJson: config, files: { 'file:1/model.bin': new Uint8Array([1]) } });
    expect(await server.repositoryIndex()).toEqual([
      { name: 'api_only', version: '1', state: 'READY', reason: '' },
      { name: 'm', version: '', state: 'UNKNOWN', reason: '' },
    ]);
    expect(await server.repositoryIndex({ readyOnly: true })).toEqual([{ name: 'api_only', version: '1', state: 'READY', reason: '' }]);
    // Its files are dropped on unload: nothing is left to load again, so it leaves the index.
    await server.unloadModel('api_only');
    expect((await server.repositoryIndex()).map((e) => e.name)).toEqual(['m']);
  });
});

describe('ensembles whose composing model goes away', () => {
  const ensRequest = (): InferRequest => ({ id: 'e', model: 'ens', inputs: [tensorFromTyped('IN', 'FP32', [1, 4], new Float32Array(4))] });
  const MISSING = "ensemble 'ens' depends on 'm2' which has no loaded version.";

  it('explicit: unloading a composing model unloads the ensemble; loading it back restores the ensemble', async () => {
    const { server } = await serve({ m2: { config: identityConfig('m2') }, ens: { config: ENSEMBLE('m2') } }, { modelControlMode: 'explicit' });
    await server.loadModel('ens');
    expect((await server.infer(ensRequest())).model).toBe('ens');

    await server.unloadModel('m2');
    expect(server.modelReady('ens')).toBe(false);
    expect((await server.repositoryIndex()).find((e) => e.name === 'ens')).toEqual({ name: 'ens', version: '1', state: 'UNAVAILABLE', reason: MISSING });
    expect((await server.repositoryIndex({ readyOnly: true })).map((e) => e.name)).toEqual([]);
    const gone = await errorOf(server.infer(ensRequest()));
    expect([gone.code, gone.message]).toEqual(['UNAVAILABLE', `model 'ens' version 1 is unavailable: ${MISSING}`]);
    // Nothing loaded is failing: the server stays ready, as after any unload.
    expect(server.isReady()).toBe(true);

    await server.loadModel('m2');
    expect(server.modelReady('ens')).toBe(true);
    expect((await server.infer(ensRequest())).model).toBe('ens');

    // Unloaded on purpose after losing its model: loading the model back leaves it unloaded.
    await server.unloadModel('m2');
    await server.unloadModel('ens');
    expect((await server.repositoryIndex()).find((e) => e.name === 'ens')?.reason).toBe('unloaded');
    await server.loadModel('m2');
    expect(server.modelReady('ens')).toBe(false);
    await server.loadModel('ens');
    expect((await server.infer(ensRequest())).model).toBe('ens');
  });

  it('explicit: an ensemble of an ensemble follows its inner ensemble', async () => {
    const outer = ENSEMBLE('ens').replace('name: "ens"', 'name: "outer"').replace('"INPUT0"', '"IN"').replace('"OUTPUT0"', '"OUT"');
    const { server } = await serve(
      { m2: { config: identityConfig('m2') }, ens: { config: ENSEMBLE('m2') }, outer: { config: outer } },
      { modelControlMode: 'explicit', startupModels: ['outer'] },
    );
    expect(server.modelReady('outer')).toBe(true);
    await server.unloadModel('m2');
    expect(server.modelReady('ens')).toBe(false);
    expect(server.modelReady('outer')).toBe(false);
    expect((await server.repositoryIndex()).find((e) => e.name === 'outer')?.reason).toBe(
      "ensemble 'outer' depends on 'ens' which has no loaded version. Model 'ens' loading failed with error: " + MISSING,
    );
    await server.loadModel('m2');
    expect(server.modelReady('outer')).toBe(true);
  });

  it('poll: removing a composing model folder makes the ensemble unavailable, naming the model; restoring it brings the ensemble back', async () => {
    const { repo, server } = await serve(
      { m2: { config: identityConfig('m2') }, ens: { config: ENSEMBLE('m2') } },
      { modelControlMode: 'poll', repositoryPollSecs: 0 },
    );
    expect((await server.infer(ensRequest())).model).toBe('ens');
    await rm(path.join(repo, 'm2'), { recursive: true });
    const failures = await server.pollNow();
    expect(failures).toEqual([`failed to load 'ens' version 1: Invalid argument: ${MISSING}`]);
    expect(server.modelReady('ens')).toBe(false);
    expect((await server.repositoryIndex()).find((e) => e.name === 'ens')).toEqual({ name: 'ens', version: '1', state: 'UNAVAILABLE', reason: MISSING });

    await writeModels(repo, { m2: { config: identityConfig('m2') } });
    expect(await server.pollNow()).toEqual([]);
    expect((await server.infer(ensRequest())).model).toBe('ens');
  });
});

describe('model repository that cannot be read', () => {
  it('fails start() in every mode with Triton\'s message: missing path, or a file', async () => {
    const repo = await makeRepo({});
    repos.push(repo);
    const missing = path.join(repo, 'nope');
    const file = path.join(repo, 'plain-file');
    await writeFile(file, 'x');
    for (const modelControlMode of ['none', 'poll', 'explicit'] as const) {
      const a = new InferenceServer({ repositories: [missing], backends: [identityBackend()], modelControlMode, exitOnError: false });
      const e = await errorOf(a.start());
      expect(e.code).toBe('INTERNAL');
      expect(e.message).toBe(`failed to stat file ${missing}`);
      expect(a.isReady()).toBe(false);
    }
    const b = new InferenceServer({ repositories: [repo, file], backends: [identityBackend()] });
    expect((await errorOf(b.start())).message).toBe(`failed to open directory ${file}`);
  });

  it('poll: a repository gone mid-run fails the poll and unloads nothing', async () => {
    const { repo, server } = await serve({ a: { config: identityConfig('a') } }, { modelControlMode: 'poll', repositoryPollSecs: 0 });
    const moved = `${repo}-moved`;
    await rename(repo, moved);
    repos.push(moved);
    expect(await server.pollNow()).toEqual([`failed to stat file ${repo}`]);
    expect((await server.infer(request('a'))).model).toBe('a');
  });
});

describe('instance health: a crash loop', () => {
  it('is UNAVAILABLE with the last crash cause while down (index, requests, readiness, metrics), and READY again once a restart works', async () => {
    const marker = path.join(os.tmpdir(), `tritium-crash-loop-${process.pid}-${Date.now()}`);
    const config = `${identityConfig('f').replace('"identity"', '"fault"')}
parameters { key: "fault_on_start" value: { string_value: "fail-while:${marker}" } }`;
    const repo = await makeRepo({ f: { config } });
    repos.push(repo);
    const server = new InferenceServer({
      repositories: [repo],
      backends: [faultBackend({ restart: { maxRestarts: 1, initialBackoffMs: 5, maxBackoffMs: 50 } })],
    });
    servers.push(server);
    await server.start();
    await writeFile(marker, '');
    try {
      // The execute that crashes it; its restarts then fail while the marker exists.
      expect((await errorOf(server.infer(request('f', { parameters: { fault: 'exit' } })))).code).toBe('INTERNAL');
      await vi.waitFor(async () => expect((await server.repositoryIndex())[0]!.state).toBe('UNAVAILABLE'), { timeout: 30_000 });
      const entry = (await server.repositoryIndex())[0]!;
      expect(entry.reason).toMatch(/^model 'f' instance 'f_0_0' crashed \d+ times in a row; last cause: createInstance failed on restart: fault backend: createInstance fails while /);
      // Answered UNAVAILABLE with the cause (HTTP 503 / gRPC UNAVAILABLE), never 404 "unknown model".
      for (const version of [undefined, 1]) {
        const down = await errorOf(server.infer(request('f', version === undefined ? {} : { version })));
        expect(down.code).toBe('UNAVAILABLE');
        expect(down.message).toMatch(/^model 'f' version 1 is unavailable: model 'f' instance 'f_0_0' crashed \d+ times in a row; last cause: /);
      }
      expect(server.isReady()).toBe(false);
      expect(server.metrics().map((m) => [m.model, m.instances.map((i) => i.healthy)])).toEqual([['f', [false]]]);
    } finally {
      await rm(marker, { force: true });
    }
    // It kept restarting; the first restart after the fix brings it back by itself.
    await vi.waitFor(async () => expect((await server.repositoryIndex())[0]).toMatchObject({ state: 'READY', reason: '' }), { timeout: 30_000 });
    expect((await server.infer(request('f'))).model).toBe('f');
    expect(server.isReady()).toBe(true);
    expect(server.metrics()[0]!.instances[0]!.restarts).toBeGreaterThan(0);
  });
});

describe('stop timeout', () => {
  it('tears down what is still running after the exit timeout', async () => {
    const repo = await makeRepo({ slow: { config: identityConfig('slow').replace('"identity"', '"fault"') } });
    repos.push(repo);
    const server = new InferenceServer({ repositories: [repo], backends: [faultBackend()] });
    servers.push(server);
    await server.start();
    const slow = errorOf(server.infer(request('slow', { parameters: { fault: 'delay:20000' } })));
    await new Promise((r) => setTimeout(r, 50));
    await server.stop({ timeoutMs: 100 });
    const e = await slow;
    expect(['INTERNAL', 'UNAVAILABLE', 'CANCELLED']).toContain(e.code);
  });
});

describe('model control: poll', () => {
  it('swaps versions while 1,000 requests run, with zero failures', async () => {
    const { repo, server } = await serve({ m: { config: identityConfig('m') } }, { modelControlMode: 'poll', repositoryPollSecs: 0 });
    const failures: unknown[] = [];
    const versions = new Set<number>();
    let sent = 0;
    let swapping = true;
    // Bounded: the loops stop once the swaps are done and 1,000 requests ran, or at the deadline.
    // Past 1,000 requests they pace themselves so a slow machine cannot run up a huge count.
    const deadline = Date.now() + 45_000;
    const loop = async (): Promise<void> => {
      while ((swapping || sent < 1000) && Date.now() < deadline) {
        if (sent >= 1000) await new Promise((r) => setTimeout(r, 1));
        sent++;
        try {
          versions.add((await server.infer(request('m', { id: String(sent) }))).version);
        } catch (e) {
          failures.push(e);
        }
      }
    };
    const loops = Array.from({ length: 8 }, loop);
    const swaps = (async () => {
      // 1) the same version changed on disk: reloaded beside the serving one, then swapped in.
      await writeFile(path.join(repo, 'm', '1', 'weights.bin'), 'new');
      expect(await server.pollNow()).toEqual([]);
      // 2) a new version appears: latest policy serves it, version 1 drains and unloads.
      await writeModels(repo, { m: { versions: { '2': {} } } });
      expect(await server.pollNow()).toEqual([]);
      swapping = false;
    })();
    await Promise.all([swaps, ...loops]);
    expect([...new Set(failures.map((f) => (f as Error).message))]).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(1000);
    expect(versions).toEqual(new Set([1, 2]));
    expect(await server.repositoryIndex()).toEqual([
      { name: 'm', version: '1', state: 'UNAVAILABLE', reason: 'unloaded' },
      { name: 'm', version: '2', state: 'READY', reason: '' },
    ]);
  });

  it('picks up new and removed models and keeps serving through a failed reload', async () => {
    const { repo, server } = await serve({ a: { config: identityConfig('a') } }, { modelControlMode: 'poll', repositoryPollSecs: 0 });
    await writeModels(repo, { b: { config: identityConfig('b') } });
    expect(await server.pollNow()).toEqual([]);
    expect((await server.infer(request('b'))).model).toBe('b');

    await writeFile(path.join(repo, 'a', 'config.pbtxt'), 'max_batch_size: banana');
    const failures = await server.pollNow();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^Poll failed for model directory 'a': /);
    expect((await server.infer(request('a'))).model).toBe('a');

    await writeFile(path.join(repo, 'a', 'config.pbtxt'), identityConfig('a'));
    await rm(path.join(repo, 'b'), { recursive: true });
    expect(await server.pollNow()).toEqual([]);
    expect((await errorOf(server.infer(request('b')))).message).toBe("Request for unknown model: 'b' has no available versions");
    expect((await server.repositoryIndex()).map((e) => e.name)).toEqual(['a']);
  });

  it('polls on its own every repositoryPollSecs', async () => {
    const { repo, server } = await serve({}, { modelControlMode: 'poll', repositoryPollSecs: 0.05 });
    await writeModels(repo, { late: { config: identityConfig('late') } });
    for (let i = 0; i < 200 && !server.modelReady('late'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(server.modelReady('late')).toBe(true);
  });

  it('stops gracefully: in-flight requests finish, new ones are refused', async () => {
    const { server } = await serve({ s: { config: identityConfig('s') } }, { modelControlMode: 'poll', repositoryPollSecs: 0 });
    const inflight = Array.from({ length: 50 }, (_, i) => server.infer(request('s', { id: String(i) })));
    const stopped = server.stop();
    expect(server.isReady()).toBe(false);
    const late = await errorOf(server.infer(request('s')));
    expect(late.code).toBe('UNAVAILABLE');
    const results = await Promise.allSettled(inflight);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    await stopped;
  });

  it('stops gracefully through ensembles: accepted requests run every step before any model unloads', async () => {
    // Pipeline batching (dynamic_batching on the ensemble, as the example's sentiment_ensemble): requests
    // wait in the ensemble's queue, so their step into 's' is issued only after the stop has begun.
    const pipeline = ENSEMBLE('s').replace('ensemble_scheduling', 'dynamic_batching { max_queue_delay_microseconds: 100000 }\nensemble_scheduling');
    const { server } = await serve({ s: { config: identityConfig('s') }, ens: { config: pipeline } }, {});
    const ensRequest = (id: string): InferRequest => ({ id, model: 'ens', inputs: [tensorFromTyped('IN', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]))] });
    const inflight = Array.from({ length: 50 }, (_, i) => server.infer(ensRequest(String(i))));
    const stopped = server.stop();
    expect((await errorOf(server.infer(ensRequest('late')))).message).toBe('Server is stopping: new inference requests are refused');
    expect((await errorOf(server.infer(request('s')))).code).toBe('UNAVAILABLE');
    const results = await Promise.allSettled(inflight);
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    await stopped;
    expect(server.modelReady('s')).toBe(false);
  });
});
