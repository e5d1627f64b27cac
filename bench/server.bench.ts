/**
 * InferenceServer overhead: what routing, request validation and statistics add per request on
 * top of the scheduler. Both sides use the same in-thread identity instance and the same
 * scheduler kind (direct and dynamic batcher), measured side by side in one run.
 *
 *     node bench/dist/server.bench.js
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InferenceServer, tensorFromTyped, type InferRequest } from '@tritium/core';
import { BACKEND_API_VERSION, validateRequest, type Backend, type ModelInstance } from '@tritium/core/backend';
import { createScheduler } from '@tritium/core/scheduler';

const instance: ModelInstance = {
  execute: (batch) =>
    Promise.resolve({ results: batch.map((r) => ({ id: r.id, model: r.model, version: 1, outputs: r.inputs.map((t) => ({ ...t, name: 'OUTPUT0' })) })) }),
  dispose: () => Promise.resolve(),
};
const inThread: Backend = {
  name: 'identity',
  apiVersion: BACKEND_API_VERSION,
  loadModel: async () => ({ createInstance: async () => instance, dispose: async () => {} }),
};

const config = (name: string, dynamic: boolean): string => `name: "${name}"
backend: "identity"
max_batch_size: 32
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
${dynamic ? 'dynamic_batching { }' : ''}`;

const tensor = tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]));
const request = (model: string, i: number): InferRequest => ({ id: String(i), model, inputs: [tensor] });

async function closedLoop(concurrency: number, total: number, send: (i: number) => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) await send(next++);
      }),
    );
    best = Math.min(best, ((performance.now() - start) * 1000) / total);
  }
  return best;
}

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-bench-'));
for (const [name, dynamic] of [['direct', false], ['batched', true]] as const) {
  mkdirSync(path.join(repo, name, '1'), { recursive: true });
  writeFileSync(path.join(repo, name, 'config.pbtxt'), config(name, dynamic));
}
const server = new InferenceServer({ repositories: [repo], backends: [inThread] });
await server.start();

const N = 20_000;
const rows: string[][] = [];
for (const model of ['direct', 'batched']) {
  const cfg = server.modelConfig(model);
  const scheduler = createScheduler(cfg, { modelName: model, version: 1, instances: [instance], infer: (r) => server.infer(r) });
  for (const concurrency of [1, 32]) {
    // Interleaved (d, s, s, d) so JIT warm-up and machine noise do not favour one side.
    const sendDirect = (i: number): Promise<unknown> => scheduler.enqueue(request(model, i));
    const sendServer = (i: number): Promise<unknown> => server.infer(request(model, i));
    const d1 = await closedLoop(concurrency, N, sendDirect);
    const s1 = await closedLoop(concurrency, N, sendServer);
    const s2 = await closedLoop(concurrency, N, sendServer);
    const d2 = await closedLoop(concurrency, N, sendDirect);
    const direct = Math.min(d1, d2);
    const viaServer = Math.min(s1, s2);
    rows.push([model, String(concurrency), direct.toFixed(2), viaServer.toFixed(2), (viaServer - direct).toFixed(2), (viaServer / direct).toFixed(2)]);
  }
  await scheduler.stop();
}
const cfg = server.modelConfig('direct');
let t = performance.now();
for (let i = 0; i < 200_000; i++) validateRequest(cfg, request('direct', i));
const validateUs = ((performance.now() - t) * 1000) / 200_000;
t = performance.now();
for (let i = 0; i < 200_000; i++) server.modelReady('direct');
const routeUs = ((performance.now() - t) * 1000) / 200_000;
await server.stop();
rmSync(repo, { recursive: true, force: true });

console.log('InferenceServer overhead (µs per request, best of 10 interleaved rounds, in-thread identity instance; the server side also keeps statistics)');
console.log(['model', 'concurrency', 'scheduler', 'server.infer', 'overhead', 'ratio'].join('\t'));
for (const r of rows) console.log(r.join('\t'));
console.log(`validateRequest: ${validateUs.toFixed(3)} µs · route (modelReady): ${routeUs.toFixed(3)} µs`);
