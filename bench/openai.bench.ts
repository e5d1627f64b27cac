/**
 * What the OpenAI layer costs: the example's embedding_ensemble (tokenizer -> encoder -> mean
 * pooling) on one `tritium serve`, asked for one sentence's embedding per request through
 * `POST /v1/embeddings` and through KServe v2 `POST /v2/models/embedding_ensemble/infer`, side by
 * side in one run: at each concurrency the configurations take turns in rounds of short windows.
 *
 *   openai-float    /v1/embeddings, encoding_format float (JSON numbers)
 *   kserve-json     KServe v2 JSON, the EMBEDDING output as JSON numbers
 *   openai-base64   /v1/embeddings, encoding_format base64 (what the openai SDK asks for by default)
 *   kserve-binary   KServe v2 JSON request, the EMBEDDING output in binary (binary_data_output)
 *
 * The client is the same raw keep-alive node:http loop with prebuilt bodies for all four, so the
 * difference is the server's. Reported per configuration and concurrency: throughput, p50 and p99,
 * server CPU per inference (the server and every process under it, all threads) and the main
 * thread's alone (where the transports, the OpenAI layer and the batcher run), and the load
 * generator's; then the OpenAI/KServe ratios of each pair, over the whole run and as the median of
 * the rounds' ratios (each round's two windows ran close in time, so a change in what else the
 * machine runs moves both).
 *
 * (B) repeats it against the transports and the OpenAI layer alone (openai/layer-server.entry.ts:
 * the same routes, the model answered at once in process), where the layer's own CPU per request is
 * not hidden under the model's.
 *
 * Run: node bench/dist/openai.bench.js   (after `npm run build` and the example's setup; env
 * BENCH_MEASURE_MS per configuration and level, default 3000, split over BENCH_ROUNDS rounds,
 * default 3; BENCH_WARMUP_MS before each window, default 500; BENCH_LEVELS, default 1,4,16,64;
 * BENCH_PARTS A, B or AB, default AB)
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { availableParallelism, loadavg } from 'node:os';
import { DEFAULT_REPOSITORY, setupExample, startTritium } from '@tritium/example-setup';
import { threadCpuSeconds, treeCpuSeconds } from './pipeline/cpu.ts';
import { measureWindow, pointOf, roundOrder, type Point, type Window } from './pipeline/measure.ts';
import { SENTENCES } from './pipeline/sentences.ts';

const MEASURE_MS = Number(process.env['BENCH_MEASURE_MS'] ?? 3000);
const WARMUP_MS = Number(process.env['BENCH_WARMUP_MS'] ?? 500);
const ROUNDS = Math.max(1, Math.floor(Number(process.env['BENCH_ROUNDS'] ?? 3)));
const LEVELS = (process.env['BENCH_LEVELS'] ?? '1,4,16,64').split(',').map(Number);
/** Levels of part (B), the layer alone: it answers at once, so more clients add nothing but queueing. */
const LAYER_LEVELS = [1, 16];
/** Which parts run: A (the pipeline), B (the layer alone), or both (default). */
const PARTS = process.env['BENCH_PARTS'] ?? 'AB';

interface Config {
  readonly key: string;
  readonly path: string;
  /** One prebuilt body per sentence. */
  readonly bodies: readonly Buffer[];
}

const kserveBody = (sentence: string, binary: boolean): Buffer =>
  Buffer.from(
    JSON.stringify({
      inputs: [{ name: 'TEXT', shape: [1, 1], datatype: 'BYTES', data: [sentence] }],
      outputs: [{ name: 'EMBEDDING', parameters: { binary_data: binary } }],
    }),
  );
const openaiBody = (sentence: string, format: 'float' | 'base64'): Buffer =>
  Buffer.from(JSON.stringify({ model: 'embedding_ensemble', input: sentence, encoding_format: format }));

const CONFIGS: readonly Config[] = [
  { key: 'openai-float', path: '/v1/embeddings', bodies: SENTENCES.map((s) => openaiBody(s, 'float')) },
  { key: 'kserve-json', path: '/v2/models/embedding_ensemble/infer', bodies: SENTENCES.map((s) => kserveBody(s, false)) },
  { key: 'openai-base64', path: '/v1/embeddings', bodies: SENTENCES.map((s) => openaiBody(s, 'base64')) },
  { key: 'kserve-binary', path: '/v2/models/embedding_ensemble/infer', bodies: SENTENCES.map((s) => kserveBody(s, true)) },
];
/** The pairs compared: the OpenAI route against the KServe form that answers the same bytes' worth. */
const PAIRS: readonly [string, string][] = [
  ['openai-float', 'kserve-json'],
  ['openai-base64', 'kserve-binary'],
];

interface Accumulated {
  readonly windows: Window[];
  cpu: { server: number; main: number; client: number };
  /** Server CPU ms per inference of each round's window, for the paired ratios. */
  readonly perRound: number[];
}

interface Row extends Point {
  /** CPU milliseconds per inference: all server processes, the server's main thread, the load generator. */
  readonly cpuMs: { server: number; main: number; client: number };
  /** Server CPU ms per inference in each round (rounds pair the configurations' windows in time). */
  readonly perRound: readonly number[];
}

const log = (line: string): void => void process.stdout.write(`${line}\n`);
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function sender(port: number, config: Config, agent: http.Agent): () => Promise<void> {
  let next = 0;
  return () =>
    new Promise<void>((resolve, reject) => {
      const body = config.bodies[next++ % config.bodies.length]!;
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: config.path, agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', () => (res.statusCode === 200 && bytes > 0 ? resolve() : reject(new Error(`${config.key}: HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

/** Every configuration at each level, in rounds, against the server `pid` listening on `port`. */
async function measure(port: number, pid: number, levels: readonly number[]): Promise<Map<string, Row[]>> {
  const results = new Map<string, Row[]>(CONFIGS.map((c) => [c.key, []]));
  for (const level of levels) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: level });
    const acc = new Map<string, Accumulated>(CONFIGS.map((c) => [c.key, { windows: [], cpu: { server: 0, main: 0, client: 0 }, perRound: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const config of roundOrder(CONFIGS, round)) {
        const a = acc.get(config.key)!;
        let before = { server: 0, main: 0, client: process.cpuUsage() };
        let after = { server: 0, main: 0, client: { user: 0, system: 0 } };
        const w = await measureWindow(level, sender(port, config, agent), WARMUP_MS, MEASURE_MS / ROUNDS, {
          start: async () => void (before = { server: treeCpuSeconds(pid), main: threadCpuSeconds(pid, pid), client: process.cpuUsage() }),
          end: async () => void (after = { server: treeCpuSeconds(pid), main: threadCpuSeconds(pid, pid), client: process.cpuUsage(before.client) }),
        });
        a.windows.push(w);
        a.perRound.push(w.completions > 0 ? ((after.server - before.server) * 1000) / w.completions : 0);
        a.cpu.server += after.server - before.server;
        a.cpu.main += after.main - before.main;
        a.cpu.client += (after.client.user + after.client.system) / 1e6;
      }
    }
    agent.destroy();
    for (const config of CONFIGS) {
      const a = acc.get(config.key)!;
      const n = a.windows.reduce((sum, w) => sum + w.completions, 0);
      const perInference = (seconds: number) => (n > 0 ? (seconds * 1000) / n : 0);
      results.get(config.key)!.push({
        ...pointOf(level, a.windows),
        cpuMs: { server: perInference(a.cpu.server), main: perInference(a.cpu.main), client: perInference(a.cpu.client) },
        perRound: a.perRound,
      });
    }
    log(`  concurrency ${level} done`);
  }
  return results;
}

/** The layer-alone server (layer-server.entry.ts) in a child process; resolves with its pid and port. */
async function startLayerServer(): Promise<{ pid: number; port: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./openai/layer-server.entry.js', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the layer server exited (${code}) before listening`)));
  });
  return { pid: child.pid!, port, stop: async () => void (child.kill('SIGTERM'), await new Promise((r) => child.once('exit', r))) };
}

async function main(): Promise<void> {
  log(`openai bench: one sentence per request; ${availableParallelism()} cores, load ${loadavg().map((l) => l.toFixed(1)).join(', ')}`);
  if (PARTS.includes('A')) await pipelinePart();
  if (PARTS.includes('B')) await layerPart();
}

async function pipelinePart(): Promise<void> {
  setupExample();
  log('\n(A) the embedding pipeline (embedding_ensemble: tokenizer -> encoder -> mean pooling) on tritium serve');
  const server = await startTritium(DEFAULT_REPOSITORY, { args: ['--model-control-mode=explicit', '--load-model=embedding_ensemble'] });
  let pipeline: Map<string, Row[]>;
  try {
    pipeline = await measure(Number(server.httpUrl.split(':')[1]), server.process.pid!, LEVELS);
  } finally {
    await server.stop();
  }
  report(pipeline);
}

async function layerPart(): Promise<void> {
  log('\n(B) the transports and the OpenAI layer alone: the same requests answered at once by an in-process stand-in for the model');
  const layer = await startLayerServer();
  try {
    report(await measure(layer.port, layer.pid, LAYER_LEVELS));
  } finally {
    await layer.stop();
  }
}

function report(results: Map<string, Row[]>): void {
  const ms = (us: number) => (us / 1000).toFixed(2);
  log('\n| configuration | concurrency | inferences/s | p50 ms | p99 ms | server CPU ms/inf | main thread ms/inf | client CPU ms/inf |');
  log('|---|---|---|---|---|---|---|---|');
  for (const [key, rows] of results) {
    for (const r of rows) {
      log(`| ${key} | ${r.concurrency} | ${r.throughput.toFixed(0)} | ${ms(r.latency.p50Us)} | ${ms(r.latency.p99Us)} | ${r.cpuMs.server.toFixed(3)} | ${r.cpuMs.main.toFixed(3)} | ${r.cpuMs.client.toFixed(3)} |`);
    }
  }
  log('\n| OpenAI / KServe | concurrency | throughput | server CPU per inference | median of the rounds\' server CPU ratios | main thread CPU per inference |');
  log('|---|---|---|---|---|---|');
  for (const [openai, kserve] of PAIRS) {
    const a = results.get(openai)!;
    const b = results.get(kserve)!;
    a.forEach((r, i) => {
      const k = b[i]!;
      const ratio = (x: number, y: number) => (y > 0 ? `${((x / y - 1) * 100).toFixed(1)}%` : '-');
      const paired = median(r.perRound.map((x, round) => x / (k.perRound[round] || x)));
      log(
        `| ${openai} / ${kserve} | ${r.concurrency} | ${ratio(r.throughput, k.throughput)} | ${ratio(r.cpuMs.server, k.cpuMs.server)} | ${ratio(paired, 1)} | ${ratio(r.cpuMs.main, k.cpuMs.main)} |`,
      );
    });
  }
  const all = [...results.values()].flat();
  log(`\nlatency samples: ${all.reduce((n, r) => n + r.latency.count, 0)}; load average now ${loadavg().map((l) => l.toFixed(1)).join(', ')}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`openai bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
