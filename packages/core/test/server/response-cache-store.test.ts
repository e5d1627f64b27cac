/**
 * InferenceServer with a response cache store that answers with promises (as a networked store
 * does): hits and misses keep Triton's statistics, an insert the store could not make still counts
 * the miss and serves the response, and a lookup that resolves after a reload schedules the request
 * on the version serving then.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InferenceServer, tensorFromTyped, type InferRequest } from '../../src/index.ts';
import type { CachedResponse, CacheInsertOutcome, ResponseCacheStore } from '../../src/cache/index.ts';
import { identityBackend } from '../../src/testing/index.ts';

const CONFIG = `name: "m"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
response_cache { enable: true }`;

/** A store over a Map that answers on a later turn; `failInserts` makes every insert 'failed'. */
class LaterStore implements ResponseCacheStore {
  readonly name = 'later';
  readonly entries = new Map<string, CachedResponse>();
  failInserts = false;
  gate: Promise<void> = Promise.resolve();
  async lookup(key: string): Promise<CachedResponse | undefined> {
    await this.gate;
    return this.entries.get(key);
  }
  async insert(key: string, response: CachedResponse): Promise<CacheInsertOutcome> {
    await new Promise((r) => setImmediate(r));
    if (this.failInserts) return 'failed';
    this.entries.set(key, response);
    return 'inserted';
  }
}

const request = (): InferRequest => ({ id: 'r', model: 'm', inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]))] });
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('InferenceServer with an asynchronous response cache store', () => {
  let root: string;
  let server: InferenceServer | undefined;
  afterEach(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const serve = async (store: ResponseCacheStore, mode: 'none' | 'explicit' = 'none') => {
    root = mkdtempSync(path.join(os.tmpdir(), 'tritium-store-'));
    mkdirSync(path.join(root, 'm', '1'), { recursive: true });
    writeFileSync(path.join(root, 'm', 'config.pbtxt'), CONFIG);
    server = new InferenceServer({ repositories: [root], backends: [identityBackend()], responseCache: store, modelControlMode: mode, ...(mode === 'explicit' ? { startupModels: ['m'] } : {}) });
    await server.start();
    return server;
  };

  it('answers a repeat from the store with Triton statistics', async () => {
    const s = await serve(new LaterStore());
    await s.infer(request());
    await settle();
    const hit = await s.infer(request());
    expect([...new Float32Array(hit.outputs[0]!.data.slice().buffer)]).toEqual([1, 2, 3, 4]);
    const [stats] = s.statistics('m');
    expect(stats!.inference_stats.cache_hit.count).toBe(1);
    expect(stats!.inference_stats.cache_miss.count).toBe(1);
    expect(stats!.execution_count).toBe(1);
  });

  it('serves and counts a miss whose insert failed', async () => {
    const store = new LaterStore();
    store.failInserts = true;
    const s = await serve(store);
    await s.infer(request());
    await s.infer(request());
    await settle();
    const [stats] = s.statistics('m');
    expect(stats!.inference_stats.cache_miss.count).toBe(2);
    expect(stats!.execution_count).toBe(2);
  });

  it('schedules on the version serving when a slow lookup misses after a reload', async () => {
    const store = new LaterStore();
    const s = await serve(store, 'explicit');
    let open!: () => void;
    store.gate = new Promise((r) => (open = r));
    const pending = s.infer(request());
    writeFileSync(path.join(root, 'm', 'config.pbtxt'), CONFIG + '\n# changed');
    await s.loadModel('m');
    open();
    expect((await pending).outputs[0]!.name).toBe('OUTPUT0');
  });
});
