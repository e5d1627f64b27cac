/**
 * What tracing costs: a full `tritium serve` container (HTTP transport, core, worker-hosted
 * identity models) serving a two-step ensemble, closed loop over HTTP, in alternating windows:
 *
 *   off      --trace-config level=OFF (the default): each request costs one settings lookup
 *   triton   level=TIMESTAMPS rate=1: every request traced into Triton's trace file
 *   otel     mode=opentelemetry, every request traced (traceparent sent), spans exported over
 *            OTLP/HTTP to a local sink (a second server, same process)
 *
 * Throughput (ensemble requests/s) and CPU-seconds per inference of the whole process (server,
 * workers and the load generator are all in it), median of BENCH_ROUNDS windows. Also the cost of
 * `TraceManager.sample` when tracing is off, per call.
 *
 *   npx tsc -b && node bench/dist/tracing.bench.js     (BENCH_MEASURE_MS, default 3000; BENCH_ROUNDS, default 3; BENCH_CONCURRENCY, default 8)
 *   BENCH_EXAMPLE=1 node bench/dist/tracing.bench.js   the example pipeline instead (model_repository/, sentiment_ensemble:
 *                                                      tokenizer model.ts -> ONNX BERT; run tools/example-setup first)
 */
import http from 'node:http';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { identityBackend } from '@tritium/core/testing';
import { createContainer, defaultBackends, parseServeFlags, TOKENS, TritonLog, type TritiumServer } from '@tritium/server';

const MEASURE_MS = Number(process.env['BENCH_MEASURE_MS'] ?? 3000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);
const WARMUP_MS = 1000;

const STEP = (name: string) => `name: "${name}"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
dynamic_batching { }
instance_group [ { kind: KIND_CPU count: 1 } ]
`;
const ENSEMBLE = `name: "ens"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 16 ] } ]
ensemble_scheduling { step [
  { model_name: "a" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "b" model_version: -1 input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUT" } }
] }`;

const EXAMPLE = process.env['BENCH_EXAMPLE'] === '1';
const MODEL = EXAMPLE ? 'sentiment_ensemble' : 'ens';
const body = Buffer.from(
  JSON.stringify(
    EXAMPLE
      ? { inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: ['I am not impressed with the performance.'] }] }
      : { inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 16], data: new Array(16).fill(1) }] },
  ),
);

function repository(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-trace-bench-'));
  for (const [name, config] of [['a', STEP('a')], ['b', STEP('b')], ['ens', ENSEMBLE]] as const) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), config);
  }
  return dir;
}

/** A sink for OTLP/HTTP exports: answers 200 and counts bytes. */
async function otlpSink(): Promise<{ url: string; bytes: () => number; close: () => void }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, bytes: () => bytes, close: () => server.close() };
}

async function start(repo: string, trace: string[]): Promise<{ server: TritiumServer; port: number }> {
  const options = parseServeFlags([
    '--model-repository', repo, '--http-port', '0', '--allow-grpc', 'false', '--allow-metrics', 'false', '--http-address', '127.0.0.1',
    ...trace.flatMap((t) => ['--trace-config', t]),
  ]);
  const log = new TritonLog({ info: false, warning: true, error: true, verbose: 0, format: 'default' });
  const container = createContainer({ options, log, backends: EXAMPLE ? defaultBackends() : [identityBackend()] });
  const server = container.get<TritiumServer>(TOKENS.TritiumServer);
  const ports = await server.start();
  return { server, port: ports.http! };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function post(port: number, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: `/v2/models/${MODEL}/infer`, agent, headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let traceCounter = 1;
const traceparent = (): Record<string, string> => ({ traceparent: `00-${(traceCounter++).toString(16).padStart(32, '0')}-00f067aa0ba902b7-01` });

/** Closed loop for `ms`: requests/s and CPU-seconds per request of this process. */
async function window(port: number, ms: number, headers: () => Record<string, string>): Promise<{ rps: number; cpuPerInfer: number }> {
  let done = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await post(port, headers());
        done++;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { rps: done / secs, cpuPerInfer: (cpu.user + cpu.system) / 1e6 / done };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const repo = EXAMPLE ? path.resolve('model_repository') : repository();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-trace-bench-out-'));
  const sink = await otlpSink();
  const file = await start(repo, ['level=OFF', 'rate=1', `triton,file=${path.join(dir, 'trace.json')}`]);
  const otel = await start(repo, ['mode=opentelemetry', 'level=TIMESTAMPS', 'rate=0', `opentelemetry,url=${sink.url}`, 'opentelemetry,bsp_schedule_delay=200']);
  const store = file.server.context.tracing.settings;
  const cells: Record<string, { rps: number[]; cpu: number[] }> = { off: { rps: [], cpu: [] }, triton: { rps: [], cpu: [] }, otel: { rps: [], cpu: [] } };
  const run = async (name: 'off' | 'triton' | 'otel', ms: number, keep: boolean) => {
    if (name !== 'otel') store.update({ level: name === 'off' ? { timestamps: false, tensors: false } : { timestamps: true, tensors: false } });
    const r = name === 'otel' ? await window(otel.port, ms, traceparent) : await window(file.port, ms, () => ({}));
    if (keep) {
      cells[name]!.rps.push(r.rps);
      cells[name]!.cpu.push(r.cpuPerInfer);
    }
  };
  for (const name of ['off', 'triton', 'otel'] as const) await run(name, WARMUP_MS, false);
  for (let round = 0; round < ROUNDS; round++) for (const name of ['off', 'triton', 'otel'] as const) await run(name, MEASURE_MS, true);

  // The off path alone: what a request pays when its model is not traced.
  store.update({ level: { timestamps: false, tensors: false } });
  const manager = file.server.context.tracing;
  const calls = 2_000_000;
  const t0 = process.hrtime.bigint();
  let sampled = 0;
  for (let i = 0; i < calls; i++) if (manager.sample(MODEL)) sampled++;
  const offNs = Number(process.hrtime.bigint() - t0) / calls;

  const off = { rps: median(cells.off!.rps), cpu: median(cells.off!.cpu) };
  console.log(`tracing bench: ${EXAMPLE ? 'sentiment_ensemble (tokenizer model.ts -> ONNX BERT)' : 'ensemble of 2 identity steps'} over HTTP, concurrency ${CONCURRENCY}, ${ROUNDS} x ${MEASURE_MS} ms windows per mode (median)`);
  console.log('| mode | requests/s | vs off | CPU-s per inference (whole process) | vs off |');
  console.log('|---|---|---|---|---|');
  for (const name of ['off', 'triton', 'otel'] as const) {
    const rps = median(cells[name]!.rps);
    const cpu = median(cells[name]!.cpu);
    console.log(`| ${name} | ${rps.toFixed(0)} | ${((rps / off.rps - 1) * 100).toFixed(1)}% | ${(cpu * 1e6).toFixed(0)} µs | ${((cpu / off.cpu - 1) * 100).toFixed(1)}% |`);
  }
  console.log(`TraceManager.sample with tracing off: ${offNs.toFixed(1)} ns per request (${sampled} sampled); ${(((offNs / 1e9) / off.cpu) * 100).toFixed(4)}% of the CPU an inference costs`);
  console.log(`OTLP bytes exported: ${sink.bytes()}`);
  await file.server.stop();
  await otel.server.stop();
  sink.close();
  agent.destroy();
  if (!EXAMPLE) rmSync(repo, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}

await main();
