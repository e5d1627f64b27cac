/**
 * Worker round trip per execute: the identity test instance in a worker thread (spawnWorkerInstance)
 * against the same instance code called in-thread, at batch 1 and 32 with small INT32 tensors.
 * Run: node bench/dist/worker.bench.js (after `npx tsc -b`)
 */
import { Worker } from 'node:worker_threads';
import { silentLogger, type InferRequest } from '@tritium/core';
import { compiledModule, spawnWorkerInstance, type CreateWorkerInstance } from '@tritium/core/worker';
import { TEST_ENTRIES, type TestModelInit } from '@tritium/core/testing';

/** The floor: a bare worker echoing one message of the same shape (no host). */
async function rawPingPongUs(size: number, iterations: number): Promise<number> {
  const w = new Worker("require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));", { eval: true });
  let resolve: (v: unknown) => void = () => {};
  w.on('message', (m) => resolve(m));
  const msg = { t: 'execute', id: 1, batch: batchOf(size).map(({ signal: _s, ...r }) => r) };
  const exec: Exec = () => new Promise((r) => ((resolve = r), w.postMessage(msg)));
  const us = await usPerExecute(exec, size, iterations);
  await w.terminate();
  return us;
}

const init: TestModelInit = { model: 'bench', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] };
const signal = new AbortController().signal;

function batchOf(size: number): InferRequest[] {
  return Array.from({ length: size }, (_, i) => ({
    id: String(i),
    model: 'bench',
    inputs: [{ name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 16], data: new Uint8Array(new Int32Array(16).fill(i).buffer) }],
  }));
}

type Exec = (batch: readonly InferRequest[]) => Promise<unknown>;

async function usPerExecute(exec: Exec, size: number, iterations: number): Promise<number> {
  const batch = batchOf(size);
  for (let i = 0; i < Math.min(500, iterations); i++) await exec(batch); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) await exec(batch);
  return ((performance.now() - t0) * 1000) / iterations;
}

const { createInstance } = (await import(compiledModule(TEST_ENTRIES.identity).href)) as { createInstance: CreateWorkerInstance<TestModelInit> };
const local = await createInstance(init, {
  model: 'bench',
  instanceName: 'bench_local',
  log: silentLogger,
  infer: () => Promise.reject(new Error('no BLS')),
  inferStream: () => ({ cancel: () => {} }),
  metric: () => {},
  metricValue: () => Promise.resolve(0),
});
const worker = await spawnWorkerInstance({ entry: TEST_ENTRIES.identity, init, model: 'bench', instanceName: 'bench_0_0' });
// The host shares 2 cores with other work: interleave the three measurements in rounds and keep each
// one's best round, so a burst of outside load does not land on one column only.
const ROUNDS = 5;
const rows: string[][] = [
  ['batch', 'in-thread µs/exec', 'bare postMessage echo µs', 'worker host µs/exec', 'worker µs/request', 'ratio worker/in-thread', 'ratio worker/bare echo'],
];
for (const size of [1, 32]) {
  const iterations = size === 1 ? 2_000 : 500;
  let a = Infinity;
  let raw = Infinity;
  let w = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    a = Math.min(a, await usPerExecute((b) => local.execute(b, { signal }), size, iterations));
    raw = Math.min(raw, await rawPingPongUs(size, iterations));
    w = Math.min(w, await usPerExecute((b) => worker.execute(b, signal), size, iterations));
  }
  rows.push([String(size), a.toFixed(1), raw.toFixed(1), w.toFixed(1), (w / size).toFixed(1), (w / a).toFixed(1), (w / raw).toFixed(2)]);
}
await worker.dispose();
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((cell, c) => cell.padStart(widths[c]!)).join('  '));
console.log(`(best of ${ROUNDS} interleaved rounds; identity instance, INT32 [1,16] per request)`);

// Worker start: spawn → ready (compiled runtime and entry; the first start warms the file cache).
await (await spawnWorkerInstance({ entry: TEST_ENTRIES.identity, init, model: 'bench', instanceName: 'warm' })).dispose();
let best = Infinity;
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  const inst = await spawnWorkerInstance({ entry: TEST_ENTRIES.identity, init, model: 'bench', instanceName: `s${i}` });
  best = Math.min(best, performance.now() - t0);
  await inst.dispose();
}
console.log(`worker start (best of 3): ${best.toFixed(0)} ms`);
