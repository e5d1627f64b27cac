/**
 * The per-request floor at low load, measured side by side in one run: what one request costs when
 * nothing else is queued (concurrency 1, sequential round trips), against the bare hops it is made of.
 *
 *   worker   a bare worker_threads ping-pong of a 4 KiB Float32Array (structured clone both ways)
 *   echo     a bare node:http server (child process) echoing the request body Tritium receives
 *   core     the same model.ts in this process: core's InferenceServer with the python-like backend,
 *            `server.infer` called directly (the worker hop and the scheduler, no network)
 *   http     `tritium serve` with an identity model.ts (FP32 [1,1024], thread isolation), HTTP,
 *            binary tensor extension, the same body as the echo
 *   grpc     the same server over gRPC (@tritium/client)
 *
 * Then the hop after an idle gap: each request sent 1 ms after the previous answer (the threads
 * sleep in between, as they do at c=1 while a request's network work runs), for the bare ping-pong,
 * core's worker host with its identity test entry (spawnWorkerInstance, no backend), and core
 * server.infer with the model.ts: p50/p90, beside the same back to back.
 *
 * Each side runs ROUNDS interleaved windows of N requests (rotated each round, so outside load lands
 * on every side alike); it prints p50/p99 latency, `compute_infer` per request from Triton's
 * statistics extension (the server's own view of the worker hop), and CPU-seconds per request of all
 * processes (client, echo or server with its children; the ping-pong's process), and that of the
 * serving process's main thread alone (echo, http, grpc: where transport work runs).
 * Before the first round each side serves FLOOR_FIRST_WARMUP requests: V8 compiles the server's
 * hot paths on its helper threads for several thousand requests after start (~200 µs of CPU per
 * request over the first 3000 after 1000, ~0 after 12000, seen per thread in /proc), and without
 * it that compile lands in the first windows' CPU figures.
 * Env: FLOOR_REQUESTS (per window, default 3000), FLOOR_WARMUP (before each window, default 1000), FLOOR_ROUNDS (default 3),
 * FLOOR_FIRST_WARMUP (per side before the first round, default 10000), FLOOR_GAP_REQUESTS (per side in the idle-gap part,
 * default 1500).
 * Run: node bench/dist/floor.bench.js (after `npx tsc -b`)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { grpc, InferInput } from '@tritium/client';
import { InferenceServer, tensorFromTyped, type InferRequest } from '@tritium/core';
import { spawnWorkerInstance } from '@tritium/core/worker';
import { TEST_ENTRIES } from '@tritium/core/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTritium } from '@tritium/example-setup';
import { cpuSeconds, threadCpuSeconds, treeCpuSeconds } from './pipeline/cpu.ts';

const N = Number(process.env['FLOOR_REQUESTS'] ?? 3000);
/** Requests sent before each window (JIT and caches warm; not measured). */
const WARMUP = Number(process.env['FLOOR_WARMUP'] ?? 1000);
const ROUNDS = Math.max(1, Number(process.env['FLOOR_ROUNDS'] ?? 3));
/** Requests each side serves once before the first round (JIT compilation done before measuring). */
const FIRST_WARMUP = Number(process.env['FLOOR_FIRST_WARMUP'] ?? 10000);
const ELEMENTS = 1024;

const IDENTITY_MODEL = `import { Tensor, InferenceResponse, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const x = r.inputs()[0]!;
      return new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', x.data, x.shape, x.datatype)] });
    });
  }
}
`;
const IDENTITY_CONFIG = `name: "identity" backend: "python" max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1, ${ELEMENTS} ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1, ${ELEMENTS} ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
parameters { key: "tritium.isolation" value: { string_value: "thread" } }
`;

/** What one side accumulated over its windows. */
interface Side {
  readonly name: string;
  readonly latenciesUs: number[];
  cpuSeconds: number;
  mainThreadCpuSeconds: number;
  computeInferNs: number;
  computeCount: number;
}

/** A side under test: one sequential request, and the CPU-seconds of every process it involves. */
interface Target {
  readonly side: Side;
  send(): Promise<void>;
  cpu(): number;
  /** CPU-seconds of the serving process's main thread, where there is a separate one. */
  mainThreadCpu?(): number;
  /** Cumulative compute_infer (ns) and its count from the statistics extension, where there is one. */
  stats?(): Promise<{ ns: number; count: number }>;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

const clientCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function window(t: Target): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await t.send();
  const s0 = t.stats ? await t.stats() : undefined;
  const cpu0 = t.cpu();
  const main0 = t.mainThreadCpu?.() ?? 0;
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await t.send();
    t.side.latenciesUs.push((performance.now() - t0) * 1000);
  }
  t.side.cpuSeconds += t.cpu() - cpu0;
  t.side.mainThreadCpuSeconds += (t.mainThreadCpu?.() ?? 0) - main0;
  if (t.stats && s0) {
    const s1 = await t.stats();
    t.side.computeInferNs += s1.ns - s0.ns;
    t.side.computeCount += s1.count - s0.count;
  }
}

const side = (name: string): Side => ({ name, latenciesUs: [], cpuSeconds: 0, mainThreadCpuSeconds: 0, computeInferNs: 0, computeCount: 0 });

/** worker: a bare thread echoing each message, the 4 KiB tensor cloned both ways. */
function workerTarget(): Target & { close(): Promise<number> } {
  const w = new Worker("const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m));", { eval: true });
  let resolve: () => void = () => {};
  w.on('message', () => resolve());
  const data = new Float32Array(ELEMENTS).fill(1.5);
  return {
    side: side('worker_threads ping-pong'),
    send: () => new Promise<void>((r) => ((resolve = r), w.postMessage(data))),
    cpu: clientCpu,
    close: () => w.terminate(),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One POST on the shared keep-alive connection; resolves when the whole answer is read. */
function post(port: number, pathname: string, headers: http.OutgoingHttpHeaders, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The KServe v2 request with the binary tensor extension: JSON header, then the 4 KiB tensor. */
function inferBody(): { body: Buffer; headers: http.OutgoingHttpHeaders } {
  const header = Buffer.from(
    JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, ELEMENTS], parameters: { binary_data_size: ELEMENTS * 4 } }],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
    }),
  );
  const tensor = Buffer.from(new Float32Array(ELEMENTS).fill(1.5).buffer);
  return { body: Buffer.concat([header, tensor]), headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': header.length } };
}

const ECHO_SERVER = `const http = require('node:http');
const s = http.createServer((req, res) => { const parts = []; req.on('data', (c) => parts.push(c)); req.on('end', () => { const b = Buffer.concat(parts); res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': b.length }); res.end(b); }); });
s.keepAliveTimeout = 60000;
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));`;

async function echoTarget(): Promise<Target & { close(): void }> {
  const child = spawn(process.execPath, ['-e', ECHO_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (c: Buffer) => resolve(Number(c.toString().trim()))));
  const { body, headers } = inferBody();
  return {
    side: side('node:http echo'),
    send: () => post(port, '/v2/models/identity/infer', headers, body),
    cpu: () => clientCpu() + cpuSeconds(child.pid!),
    mainThreadCpu: () => threadCpuSeconds(child.pid!, child.pid!),
    close: () => child.kill('SIGTERM'),
  };
}

async function computeInfer(port: number): Promise<{ ns: number; count: number }> {
  const r = await fetch(`http://127.0.0.1:${port}/v2/models/identity/stats`);
  const j = (await r.json()) as { model_stats: { inference_stats: { compute_infer: { ns: number; count: number } } }[] };
  return j.model_stats[0]!.inference_stats.compute_infer;
}

const repo = mkdtempSync(path.join(tmpdir(), 'tritium-bench-floor-'));
mkdirSync(path.join(repo, 'identity', '1'), { recursive: true });
writeFileSync(path.join(repo, 'identity', 'config.pbtxt'), IDENTITY_CONFIG);
writeFileSync(path.join(repo, 'identity', '1', 'model.ts'), IDENTITY_MODEL);

const server = await startTritium(repo);
const httpPort = Number(server.httpUrl.split(':')[1]);
const serverCpu = (): number => clientCpu() + treeCpuSeconds(server.process.pid!);
const serverMainThreadCpu = (): number => threadCpuSeconds(server.process.pid!, server.process.pid!);
const { body, headers } = inferBody();
const grpcClient = new grpc.InferenceServerClient(server.grpcUrl);
const grpcInput = new InferInput('INPUT0', [1, ELEMENTS], 'FP32').setData(new Float32Array(ELEMENTS).fill(1.5));
const core = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend()] });
await core.start();
const coreInput = tensorFromTyped('INPUT0', 'FP32', [1, ELEMENTS], new Float32Array(ELEMENTS).fill(1.5));
let coreId = 0;
const coreTarget: Target = {
  side: side('core server.infer'),
  send: async () => void (await core.infer({ id: String(coreId++), model: 'identity', inputs: [coreInput] })),
  cpu: clientCpu,
  stats: () => Promise.resolve(core.statistics('identity')[0]!.inference_stats.compute_infer),
};
const worker = workerTarget();
const echo = await echoTarget();
const targets: Target[] = [
  worker,
  coreTarget,
  echo,
  { side: side('tritium HTTP'), send: () => post(httpPort, '/v2/models/identity/infer', headers, body), cpu: serverCpu, mainThreadCpu: serverMainThreadCpu, stats: () => computeInfer(httpPort) },
  {
    side: side('tritium gRPC'),
    send: async () => void (await grpcClient.infer('identity', [grpcInput])),
    cpu: serverCpu,
    mainThreadCpu: serverMainThreadCpu,
    stats: () => computeInfer(httpPort),
  },
];

for (const t of targets) for (let i = 0; i < FIRST_WARMUP; i++) await t.send();
const load0 = loadavg()[0]!;
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < targets.length; i++) await window(targets[(i + round) % targets.length]!);
}
const load1 = loadavg()[0]!;

// The hop after an idle gap: the same sides, each request 1 ms after the previous answer.
const GAP_REQUESTS = Number(process.env['FLOOR_GAP_REQUESTS'] ?? 1500);
const host = await spawnWorkerInstance({ entry: TEST_ENTRIES.identity, init: { model: 'identity', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] }, model: 'identity', instanceName: 'identity_host' });
const hostBatch: InferRequest[] = [{ id: '1', model: 'identity', inputs: [coreInput] }];
const signal = new AbortController().signal;
const gapSides: [string, () => Promise<unknown>][] = [
  ['worker_threads ping-pong', () => worker.send()],
  ['core worker host (identity entry)', () => host.execute(hostBatch, signal)],
  ['core server.infer (model.ts)', () => coreTarget.send()],
];
const gapRows: string[][] = [['side', 'back to back p50 µs', 'after 1 ms idle p50 µs', 'p90 µs']];
const gapLatencies = new Map<string, number[]>(gapSides.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < gapSides.length; i++) {
    const [name, send] = gapSides[(i + round) % gapSides.length]!;
    for (let n = 0; n < 200; n++) await send();
    for (let n = 0; n < GAP_REQUESTS / ROUNDS; n++) {
      await sleep(1);
      const t0 = performance.now();
      await send();
      gapLatencies.get(name)!.push((performance.now() - t0) * 1000);
    }
  }
}
await host.dispose();
for (const [name] of gapSides) {
  const sorted = [...gapLatencies.get(name)!].sort((a, b) => a - b);
  const backToBack = name.startsWith('worker') ? targets[0]!.side : name.includes('server.infer') ? coreTarget.side : undefined;
  const b2b = backToBack ? percentile([...backToBack.latenciesUs].sort((a, b) => a - b), 50).toFixed(0) : '-';
  gapRows.push([name, b2b, percentile(sorted, 50).toFixed(0), percentile(sorted, 90).toFixed(0)]);
}
await worker.close();
echo.close();
grpcClient.close();
await server.stop();
await core.stop();
rmSync(repo, { recursive: true, force: true });

const bare = targets[0]!.side;
const bareP50 = percentile([...bare.latenciesUs].sort((a, b) => a - b), 50);
const rows: string[][] = [['side', 'p50 µs', 'p99 µs', 'p50 − worker µs', 'compute_infer µs/req', 'CPU µs/req (all processes)', 'server main thread CPU µs/req']];
for (const t of targets) {
  const s = t.side;
  const sorted = [...s.latenciesUs].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  rows.push([
    s.name,
    p50.toFixed(0),
    percentile(sorted, 99).toFixed(0),
    (p50 - bareP50).toFixed(0),
    s.computeCount > 0 ? (s.computeInferNs / s.computeCount / 1000).toFixed(0) : '-',
    ((s.cpuSeconds / s.latenciesUs.length) * 1e6).toFixed(0),
    t.mainThreadCpu ? ((s.mainThreadCpuSeconds / s.latenciesUs.length) * 1e6).toFixed(0) : '-',
  ]);
}
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
console.log(`(concurrency 1, ${FIRST_WARMUP} requests per side first, then ${ROUNDS} interleaved rounds of ${N} sequential requests per side; FP32 [1,${ELEMENTS}]; load average ${load0.toFixed(2)} -> ${load1.toFixed(2)})`);
console.log('');
const gapWidths = gapRows[0]!.map((_, c) => Math.max(...gapRows.map((r) => r[c]!.length)));
for (const r of gapRows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(gapWidths[c]!) : cell.padStart(gapWidths[c]!))).join('  '));
console.log(`(${GAP_REQUESTS} requests per side, each 1 ms after the previous answer; load average when done ${loadavg()[0]!.toFixed(2)})`);
