/**
 * `npm run bench`: the seed's claim, measured side by side in one run on this machine.
 *
 *   (a) the seed's pipeline: sentiment_ensemble with pipeline batching (one batcher, raw text in)
 *   (a') the same, with the batching tuned for this CPU (the seed's own tuning advice)
 *   (s) the example as shipped (`npm start`): the seed's config with adaptive batching
 *   (t) the seed's config with length-aware batching (`tritium.batch_tokens`)
 *   (b) the same models as a per-step ensemble (Triton's semantics: each composing model batches)
 *   (c) no batching anywhere
 *   (d) the microservice pattern: a preprocessing HTTP service (child process) that tokenizes each
 *       request and calls Tritium's bert_classifier over gRPC
 *   (e) the limit: tokenizer + ONNX session in one process, tight loop at the best batch size
 *   (f) the GPU-shaped case: bert_classifier replaced by the gpu_sim test double (4 ms + 0.02 ms per
 *       row on a timer), the real tokenizer in front: (f-a) pipeline batching, (f-c) no batching,
 *       (f-d) the microservice pattern
 *
 * The mixed-length workload (bench/pipeline/mixed-texts.ts: seeded review-like texts of 4–256
 * tokens, long-tailed): (a-mix) the seed's pipeline, (t-mix) with length-aware batching, and (e-t)
 * the in-process limit on the same texts (best batch, padded to its longest).
 *
 * Each configuration at concurrency 1, 16, 64, 256 (closed loop, one text per request, HTTP),
 * reporting throughput, p50 and p99. The configurations of a group ((a)–(d), then (f)) run at once and
 * take turns at each concurrency in rounds of short windows, so the ratios between them are measured
 * side by side; (e) is measured before and after its group and averaged. Prints a table and ratios and writes the report
 * (benchmarks.md, benchmarks.svg) to tmp/bench-report/, or, with `--write-docs`
 * (`npm run bench -- --write-docs`), to docs/ (tracked files: only when asked).
 * Env: BENCH_MEASURE_MS (default 4000: measured per configuration and level, split over the rounds;
 * a window's warm-up and measured part each also last until as many requests as the concurrency completed),
 * BENCH_WARMUP_MS (default 1000, before each window), BENCH_ROUNDS (default 3); for a reduced run
 * on a busy machine, BENCH_LEVELS (default 1,16,64,256), BENCH_GROUPS (default seed,mixed,gpu) and
 * BENCH_ONLY (configuration keys, e.g. "(a),(s),(c)"; default all).
 *
 * Over 400 lines because it is the one script that starts every configuration, takes their turns
 * and writes their report, each step reading the same rows; the parts any bench reuses are in
 * bench/pipeline/ (windows, CPU, the in-process limit, repositories).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { http as tritonHttp, InferInput, InferRequestedOutput } from '@tritium/client';
import { addCounters, breakdown, createPerfClient, plotSvg, snapshot, type ModelCounters, type ServerBreakdown, type StatsSnapshot } from '@tritium/perf';
import { EXAMPLE_SHAPE, setupExample, startTritium, type ServeProcess } from '@tritium/example-setup';
import { cpuSeconds, threadCpuSeconds } from './pipeline/cpu.ts';
import { meanLimit, measureLimit, type LimitResult } from './pipeline/limit.ts';
import { measureWindow, pointOf, roundOrder, type Point, type Window } from './pipeline/measure.ts';
import { writeRepository, type ClassifierModel, type Variant } from './pipeline/repositories.ts';
import { reportDir } from './pipeline/report-dir.ts';
import { compareWithPrevious } from './pipeline/cpu-agreement.ts';
import { SENTENCES } from './pipeline/sentences.ts';
import { lengthSummary, MIXED_SEED, mixedTexts, type MixedText } from './pipeline/mixed-texts.ts';
import { paddingEfficiency, tokenCounts, type TokenTotals } from './pipeline/tokens.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The repository (this file runs compiled, from bench/dist/). */
const REPO = resolve(HERE, '../..');
let OUT: string;
try {
  OUT = reportDir(process.argv.slice(2), REPO);
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n`);
  process.exit(2);
}
const LEVELS = (process.env['BENCH_LEVELS'] ?? '1,16,64,256').split(',').map(Number);
const GROUPS = new Set((process.env['BENCH_GROUPS'] ?? 'seed,mixed,gpu').split(','));
/** Only these configurations of the groups run (all when unset). */
const ONLY = process.env['BENCH_ONLY'] ? new Set(process.env['BENCH_ONLY'].split(',')) : undefined;
/** Texts of the mixed-length workload (each configuration sends them in the same order). */
const MIXED_COUNT = 4096;
const MEASURE_MS = Number(process.env['BENCH_MEASURE_MS'] ?? 4000);
const WARMUP_MS = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
/** Windows per configuration and concurrency; MEASURE_MS is split among them. */
const ROUNDS = Math.max(1, Math.floor(Number(process.env['BENCH_ROUNDS'] ?? 3)));

interface Row extends Point {
  /** Mean batch bert_classifier executed (inferences / executions) during the window. */
  readonly modelBatch: number;
  /** CPU seconds per second of wall time: server (and of it, its main thread), side service, load generator. */
  readonly cpu: { server: number; serverMain: number; service: number; client: number };
  /** Server statistics over the window, per model (per-request averages). */
  readonly server: { ensemble?: ServerBreakdown; tokenizer?: ServerBreakdown; bert: ServerBreakdown };
  /** The ensemble's token counts over the window (length-aware batching records them). */
  readonly tokens: TokenTotals;
}

interface ConfigResult {
  readonly key: string;
  readonly name: string;
  readonly rows: Row[];
}

const log = (line: string) => process.stdout.write(`${line}\n`);
/** ONNX Runtime's settings on both sides of (e)/(e-t) vs the served pipeline (limit.ts; backend-onnx's session-options.ts). */
const ORT_SETTINGS =
  `ONNX Runtime, both sides: ${availableParallelism()} intra-op threads (the served bert_classifier has one instance, which gets every core; ` +
  '(e) and (e-t) run one session with as many), intra-op spinning off, graph optimization "all".';

/** Statistics of the pipeline's models (whichever of them the server has). */
async function stats(url: string): Promise<StatsSnapshot> {
  const client = createPerfClient('http', url);
  try {
    return await snapshot(client, ['sentiment_ensemble', 'tokenizer', 'bert_classifier']);
  } finally {
    client.close();
  }
}

/** A configuration under load: its server (and side service) running, and how to send one request. */
interface Target {
  readonly key: string;
  readonly name: string;
  readonly server: ServeProcess;
  readonly servicePid?: number;
  readonly send: () => Promise<void>;
  close(): Promise<void>;
}

/** What one configuration accumulated at one concurrency over its windows. */
interface Accumulated {
  readonly windows: Window[];
  cpu: { server: number; serverMain: number; service: number; client: number };
  before: Map<string, ModelCounters>;
  after: Map<string, ModelCounters>;
  tokens: TokenTotals;
}

function addInto(sum: Map<string, ModelCounters>, snap: StatsSnapshot): void {
  for (const [name, c] of snap) {
    const prev = sum.get(name);
    sum.set(name, prev ? addCounters(prev, c) : c);
  }
}

/** One window of `t` at concurrency `c`, added to `acc`: CPU and server statistics cover exactly the measured part. */
async function window(t: Target, c: number, warmupMs: number, measureMs: number, acc: Accumulated): Promise<void> {
  const pid = t.server.process.pid!;
  let cpu0 = { server: 0, serverMain: 0, service: 0, client: process.cpuUsage() };
  let before: StatsSnapshot | undefined;
  let cpu1 = { server: 0, serverMain: 0, service: 0, client: { user: 0, system: 0 } };
  let after: StatsSnapshot | undefined;
  let tokens0: TokenTotals = { real: 0, padded: 0 };
  let tokens1: TokenTotals = { real: 0, padded: 0 };
  const w = await measureWindow(c, t.send, warmupMs, measureMs, {
    start: async () => {
      before = await stats(t.server.httpUrl);
      tokens0 = await tokenCounts(t.server.httpUrl, 'sentiment_ensemble');
      cpu0 = { server: cpuSeconds(pid), serverMain: threadCpuSeconds(pid, pid), service: t.servicePid ? cpuSeconds(t.servicePid) : 0, client: process.cpuUsage() };
    },
    end: async () => {
      cpu1 = { server: cpuSeconds(pid), serverMain: threadCpuSeconds(pid, pid), service: t.servicePid ? cpuSeconds(t.servicePid) : 0, client: process.cpuUsage(cpu0.client) };
      after = await stats(t.server.httpUrl);
      tokens1 = await tokenCounts(t.server.httpUrl, 'sentiment_ensemble');
    },
  });
  acc.tokens.real += tokens1.real - tokens0.real;
  acc.tokens.padded += tokens1.padded - tokens0.padded;
  acc.windows.push(w);
  acc.cpu.server += cpu1.server - cpu0.server;
  acc.cpu.serverMain += cpu1.serverMain - cpu0.serverMain;
  acc.cpu.service += cpu1.service - cpu0.service;
  acc.cpu.client += (cpu1.client.user + cpu1.client.system) / 1e6;
  addInto(acc.before, before!);
  addInto(acc.after, after!);
}

function rowOf(c: number, acc: Accumulated): Row {
  const point = pointOf(c, acc.windows);
  const seconds = acc.windows.reduce((n, w) => n + w.elapsedMs, 0) / 1000;
  const model = (name: string) => breakdown(name, [], acc.before, acc.after);
  const bert = model('bert_classifier');
  return {
    ...point,
    modelBatch: bert.executionCount > 0 ? bert.inferenceCount / bert.executionCount : 0,
    server: {
      ensemble: acc.after.has('sentiment_ensemble') ? model('sentiment_ensemble') : undefined,
      tokenizer: acc.after.has('tokenizer') ? model('tokenizer') : undefined,
      bert,
    },
    cpu: { server: acc.cpu.server / seconds, serverMain: acc.cpu.serverMain / seconds, service: acc.cpu.service / seconds, client: acc.cpu.client / seconds },
    tokens: { ...acc.tokens },
  };
}

/**
 * Runs every level against every configuration of a group, side by side: at each concurrency the
 * configurations take turns in ROUNDS rounds of short windows (rotated each round), so a change in
 * what else the machine runs lands on all of them alike instead of on whichever ran at that minute.
 * Each configuration's point sums its windows.
 */
async function sweepSideBySide(targets: readonly Target[]): Promise<ConfigResult[]> {
  const rows = new Map<string, Row[]>(targets.map((t) => [t.key, []]));
  for (const c of LEVELS) {
    const acc = new Map<string, Accumulated>(targets.map((t) => [t.key, { windows: [], cpu: { server: 0, serverMain: 0, service: 0, client: 0 }, before: new Map(), after: new Map(), tokens: { real: 0, padded: 0 } }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of roundOrder(targets, round)) await window(t, c, WARMUP_MS, MEASURE_MS / ROUNDS, acc.get(t.key)!);
    }
    for (const t of targets) {
      const row = rowOf(c, acc.get(t.key)!);
      rows.get(t.key)!.push(row);
      log(
        `  ${t.key.padEnd(7)} c=${String(c).padStart(3)}: ${row.throughput.toFixed(0).padStart(6)} req/s  p50 ${(row.latency.p50Us / 1000).toFixed(1).padStart(7)} ms  ` +
          `p99 ${(row.latency.p99Us / 1000).toFixed(1).padStart(7)} ms  model batch ${row.modelBatch.toFixed(1).padStart(5)}  ` +
          `cpu server ${row.cpu.server.toFixed(2)} service ${row.cpu.service.toFixed(2)} client ${row.cpu.client.toFixed(2)}`,
      );
    }
  }
  return targets.map((t) => ({ key: t.key, name: t.name, rows: rows.get(t.key)! }));
}

async function tritiumTarget(
  root: string,
  key: string,
  name: string,
  variant: Variant,
  model: ClassifierModel = 'onnx',
  texts: readonly string[] = SENTENCES,
): Promise<Target> {
  log(`${key} ${name}: starting tritium serve`);
  const server = await startTritium(writeRepository(root, variant, model));
  const client = new tritonHttp.InferenceServerClient(server.httpUrl, { concurrency: Math.max(...LEVELS) });
  const inputs = texts.map((s) => [new InferInput('TEXT', [1, 1], 'BYTES').setData([s])]);
  const outputs = [new InferRequestedOutput('LOGITS')];
  let i = 0;
  return {
    key,
    name,
    server,
    send: async () => {
      const result = await client.infer('sentiment_ensemble', inputs[i++ % inputs.length]!, { outputs });
      if (result.asTypedArray('LOGITS', 'FP32').length !== 2) throw new Error('bad LOGITS');
    },
    close: async () => {
      client.close();
      await server.stop();
    },
  };
}

async function microserviceTarget(root: string, tokenizerDir: string, key = '(d)', model: ClassifierModel = 'onnx'): Promise<Target> {
  const name = `microservice: preprocessing HTTP service → Tritium bert_classifier${model === 'onnx' ? '' : ` (${model})`} over gRPC`;
  log(`${key} ${name}: starting tritium serve + the service`);
  const server = await startTritium(writeRepository(root, 'model-only', model));
  const child = spawn(process.execPath, [join(HERE, 'pipeline', 'microservice.js'), tokenizerDir, server.grpcUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stopChild = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  let port: number;
  try {
    port = await new Promise<number>((ok, fail) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening (\d+)/.exec(out);
        if (m) ok(Number(m[1]));
      });
      child.once('exit', (code) => fail(new Error(`microservice exited (${code})`)));
    });
  } catch (error) {
    await server.stop();
    throw error;
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(...LEVELS) });
  const bodies = SENTENCES.map((s) => JSON.stringify({ text: s }));
  let i = 0;
  const send = () =>
    new Promise<void>((ok, fail) => {
      const body = bodies[i++ % bodies.length]!;
      const req = http.request(
        { host: '127.0.0.1', port, path: '/classify', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { logits?: number[]; error?: string };
            if (res.statusCode === 200 && reply.logits?.length === 2) ok();
            else fail(new Error(`microservice: ${res.statusCode} ${reply.error ?? ''}`));
          });
        },
      );
      req.on('error', fail);
      req.end(body);
    });
  return {
    key,
    name,
    server,
    servicePid: child.pid,
    send,
    close: async () => {
      agent.destroy();
      await stopChild();
      await server.stop();
    },
  };
}

/** Starts a group's configurations, measures them side by side, and stops them whatever happens. */
async function group(starts: ReadonlyArray<readonly [string, () => Promise<Target>]>): Promise<ConfigResult[]> {
  const targets: Target[] = [];
  try {
    for (const [key, start] of starts) if (!ONLY || ONLY.has(key)) targets.push(await start());
    if (targets.length === 0) return [];
    return await sweepSideBySide(targets);
  } finally {
    for (const t of targets) await t.close();
  }
}

function ms(us: number): string {
  return (us / 1000).toFixed(1);
}

/** Each configuration's CPU per inference (every process) over (e)'s, by `<config> c=<concurrency>`: what noise should not move. */
function cpuRatios(configs: readonly ConfigResult[], limit: LimitResult): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of configs) for (const r of c.rows) out[`${c.key} c=${r.concurrency}`] = cpuMsPerInference(r) / limit.cpuMsPerInference;
  return out;
}

/** CPU milliseconds per inference, every process summed (server, side service, load generator). */
function cpuMsPerInference(r: Row): number {
  return r.throughput > 0 ? ((r.cpu.server + r.cpu.service + r.cpu.client) * 1000) / r.throughput : 0;
}

/** CPU milliseconds per inference of the serving processes only (server and side service: what a deployment pays). */
function servingCpuMsPerInference(r: Row): number {
  return r.throughput > 0 ? ((r.cpu.server + r.cpu.service) * 1000) / r.throughput : 0;
}

function report(configs: readonly ConfigResult[], limit: LimitResult | undefined, mixedLimit: LimitResult | undefined): { text: string; markdown: string } {
  const header = ['config', 'concurrency', 'req/s', 'p50 ms', 'p99 ms', 'model batch', 'cpu server', 'cpu service', 'cpu client', 'cpu ms/inf'];
  const rows: string[][] = [];
  for (const c of configs) {
    for (const r of c.rows) {
      rows.push([
        c.key,
        String(r.concurrency),
        r.throughput.toFixed(0),
        ms(r.latency.p50Us),
        ms(r.latency.p99Us),
        r.modelBatch.toFixed(1),
        r.cpu.server.toFixed(2),
        r.cpu.service.toFixed(2),
        r.cpu.client.toFixed(2),
        cpuMsPerInference(r).toFixed(2),
      ]);
    }
  }
  for (const [key, l] of [['(e)', limit], ['(e-t)', mixedLimit]] as const) {
    if (l) rows.push([key, `batch ${l.batchSize}`, l.throughput.toFixed(0), ms(l.latency.p50Us), ms(l.latency.p99Us), String(l.batchSize), '-', '-', '-', l.cpuMsPerInference.toFixed(2)]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const text = [header, widths.map((w) => '-'.repeat(w)), ...rows].map((r) => r.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
  const markdown = [`| ${header.join(' | ')} |`, `|${header.map(() => '---:').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  return { text, markdown };
}

interface Ratio {
  readonly label: string;
  readonly value: number;
  readonly target: number;
  readonly pass: boolean;
  readonly detail: string;
  /** 'ms': a difference in milliseconds that must stay at most `target`; 'max': a ratio of at most `target`; 'min': a fraction of at least `target` (else a ratio of at least). */
  readonly unit?: 'ms' | 'max' | 'min';
}

/** One target as printed: `1.23× (target 1×)` or `0.4 ms (target ≤ 1 ms)`. */
const shown = (r: Ratio): string =>
  Number.isNaN(r.value)
    ? `not measured (target ${r.target}×)`
    : r.unit === 'ms'
    ? `${r.value.toFixed(2)} ms (target ≤ ${r.target} ms)`
    : r.unit === 'max'
      ? `${r.value.toFixed(2)}× (target ≤ ${r.target}×)`
      : r.unit === 'min'
        ? `${r.value.toFixed(2)} (target ≥ ${r.target})`
        : `${r.value.toFixed(2)}× (target ${r.target}×)`;

/**
 * The serving overhead against (e) at the batch size the served model actually ran, not (e)'s best:
 * what the server adds, apart from what the config's batch size costs the model itself.
 */
function sameBatchText(servingMs: number, modelBatch: number, limit: LimitResult): string {
  const near = limit.sweep.reduce((x, y) => (Math.abs(y.batchSize - modelBatch) < Math.abs(x.batchSize - modelBatch) ? y : x));
  return `against (e) at batch ${near.batchSize} (bert ran ${modelBatch.toFixed(1)}): ${near.cpuMsPerInference.toFixed(2)} ms, ${(servingMs / near.cpuMsPerInference).toFixed(2)}×`;
}

/** What the mixed-length group measured beside its configurations. */
interface MixedRun {
  /** (e-t): the in-process limit on the mixed texts. */
  readonly limit: LimitResult;
  /** The texts' token counts, in the order they are sent. */
  readonly lengths: readonly number[];
}

function ratios(configs: readonly ConfigResult[], limit: LimitResult | undefined, mixed: MixedRun | undefined): Ratio[] {
  const by = (key: string) => configs.find((c) => c.key === key);
  const at = (key: string, c: number) => by(key)?.rows.find((r) => r.concurrency === c);
  const has = (...keys: string[]) => keys.every((k) => by(k));
  const best = (key: string) => Math.max(...by(key)!.rows.map((r) => r.throughput));
  const out: Ratio[] = [];
  const throughputRatio = (mine: string, other: string, level: number, target: number, needLowerP99: boolean): void => {
    const m = at(mine, level);
    const o = at(other, level);
    if (!m || !o) return;
    if (m.throughput === 0 || o.throughput === 0) {
      const none = m.throughput === 0 ? mine : other;
      out.push({ label: `${mine} / ${other} at concurrency ${level}`, value: Number.NaN, target, pass: false, detail: `not measured: no request of ${none} completed in its windows` });
      return;
    }
    const value = m.throughput / o.throughput;
    const lowerP99 = m.latency.p99Us <= o.latency.p99Us;
    out.push({
      label: `${mine} / ${other} at concurrency ${level}`,
      value,
      target,
      pass: value >= target && (!needLowerP99 || lowerP99),
      detail:
        `${m.throughput.toFixed(0)} vs ${o.throughput.toFixed(0)} req/s; p99 ${ms(m.latency.p99Us)} vs ${ms(o.latency.p99Us)} ms` +
        (needLowerP99 && !lowerP99 ? ' (p99 NOT lower)' : ''),
    });
  };
  if (limit) {
    for (const mine of ['(a)', "(a')"].filter((k) => has(k))) {
      const b = best(mine);
      out.push({ label: `${mine} best / (e) limit`, value: b / limit.throughput, target: 0.85, pass: b / limit.throughput >= 0.85, detail: `${b.toFixed(0)} vs ${limit.throughput.toFixed(0)} req/s` });
    }
  }
  const pairs = [
    ['(a)', '(c)', 3, 64],
    ['(a)', '(d)', 2, 64],
    ['(a)', '(b)', 1, 64],
    ['(a)', '(b)', 1, 256],
    ["(a')", '(c)', 3, 64],
    ["(a')", '(d)', 2, 64],
    ['(f-a)', '(f-c)', 5, 64],
    ['(f-a)', '(f-d)', 3, 64],
  ] as const;
  for (const [mine, key, target, level] of pairs) throughputRatio(mine, key, level, target, true);
  // Serving overhead: CPU per inference of the served pipeline against the same work in one process.
  for (const mine of ['(a)', "(a')"]) {
    const row = at(mine, 64);
    if (!row || !limit) continue;
    const value = servingCpuMsPerInference(row) / limit.cpuMsPerInference;
    out.push({
      label: `${mine} server CPU per inference at concurrency 64 / (e)'s`,
      value,
      target: 1.1,
      pass: value <= 1.1,
      unit: 'max',
      detail:
        `${servingCpuMsPerInference(row).toFixed(2)} vs ${limit.cpuMsPerInference.toFixed(2)} ms (load generator apart: ${((row.cpu.client * 1000) / Math.max(row.throughput, 1)).toFixed(2)} ms); ` +
        sameBatchText(servingCpuMsPerInference(row), row.modelBatch, limit),
    });
  }
  // The example as shipped: a lone client does not pay the queue delay; mid and high load lose nothing.
  const shipped1 = at('(s)', 1);
  const none1 = at('(c)', 1);
  if (shipped1 && none1) {
    const gapMs = (shipped1.latency.p50Us - none1.latency.p50Us) / 1000;
    out.push({
      label: '(s) p50 − (c) p50 at concurrency 1',
      value: gapMs,
      target: 1,
      pass: gapMs <= 1,
      unit: 'ms',
      detail: `${ms(shipped1.latency.p50Us)} vs ${ms(none1.latency.p50Us)} ms (the fixed delay: (a) ${at('(a)', 1) ? ms(at('(a)', 1)!.latency.p50Us) : '-'} ms)`,
    });
  }
  for (const level of [16, 64, 256]) throughputRatio('(s)', '(a)', level, 0.95, false);
  // Length-aware batching on today's sentences: no worse than the seed's pipeline (within noise).
  for (const level of [64, 256]) throughputRatio('(t)', '(a)', level, 0.95, false);
  // The mixed-length workload.
  for (const level of [64, 256]) throughputRatio('(t-mix)', '(a-mix)', level, 1.5, true);
  for (const level of [64, 256]) {
    const t = at('(t-mix)', level);
    if (!t) continue;
    const eff = t.tokens.padded > 0 ? t.tokens.real / t.tokens.padded : 0;
    const a = at('(a-mix)', level);
    const today = a && a.modelBatch > 0 && mixed ? `; (a-mix) pads to ${paddingEfficiency(mixed.lengths, a.modelBatch).toFixed(2)} (its mean batch of ${a.modelBatch.toFixed(1)} texts in arrival order)` : '';
    out.push({ label: `(t-mix) padding efficiency at concurrency ${level}`, value: eff, target: 0.9, pass: eff >= 0.9, unit: 'min', detail: `${t.tokens.real} real / ${t.tokens.padded} padded tokens${today}` });
    if (mixed) {
      const value = t.throughput / mixed.limit.throughput;
      const main = t.throughput > 0 ? (t.cpu.serverMain * 1000) / t.throughput : 0;
      const cpu = `CPU per inference ${servingCpuMsPerInference(t).toFixed(2)} (the server's main thread ${main.toFixed(2)}) vs ${mixed.limit.cpuMsPerInference.toFixed(2)} ms`;
      out.push({
        label: `(t-mix) / (e-t) at concurrency ${level}`,
        value,
        target: 1,
        pass: value >= 1,
        detail: `${t.throughput.toFixed(0)} vs ${mixed.limit.throughput.toFixed(0)} req/s ((e-t) at batch ${mixed.limit.batchSize}); ${cpu}`,
      });
    }
  }
  return out;
}

/** Where the time goes at one concurrency: the server's own per-request accounting per model. */
function profileTable(configs: readonly ConfigResult[], concurrency: number): string {
  const header = ['config', 'req/s', 'client avg ms', 'ensemble request ms', 'ensemble queue ms', 'tokenizer queue ms', 'tokenizer compute ms', 'tokenizer batch', 'bert queue ms', 'bert compute ms', 'bert batch', 'cpu server+service+client'];
  const f = (us: number | undefined) => (us === undefined ? '-' : (us / 1000).toFixed(2));
  const batch = (b: ServerBreakdown | undefined) => (b && b.executionCount > 0 ? (b.inferenceCount / b.executionCount).toFixed(1) : '-');
  const compute = (b: ServerBreakdown | undefined) => (b ? b.computeInputUs + b.computeInferUs + b.computeOutputUs : undefined);
  const rows = configs.flatMap((c) => {
    const r = c.rows.find((x) => x.concurrency === concurrency);
    if (!r) return [];
    const { ensemble, tokenizer, bert } = r.server;
    return [[
      c.key,
      r.throughput.toFixed(0),
      f(r.latency.avgUs),
      f(ensemble?.avgRequestUs),
      f(ensemble?.queueUs),
      f(tokenizer?.queueUs),
      f(compute(tokenizer)),
      batch(tokenizer),
      f(bert.queueUs),
      f(compute(bert)),
      batch(bert),
      `${r.cpu.server.toFixed(2)} + ${r.cpu.service.toFixed(2)} + ${r.cpu.client.toFixed(2)}`,
    ]];
  });
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---:').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function plot(configs: readonly ConfigResult[], limit: LimitResult | undefined): string {
  return plotSvg({
    title: 'Sentiment pipeline on this machine: throughput vs p99 latency',
    xLabel: 'throughput (requests/s)',
    yLabel: 'p99 latency (ms, log scale)',
    logY: true,
    series: [
      ...configs.map((c) => ({
        name: `${c.key} ${c.name.split(':')[0]}`,
        points: c.rows.map((r) => ({ x: r.throughput, y: r.latency.p99Us / 1000, label: `c${r.concurrency}` })),
      })),
      ...(limit ? [{ name: '(e) limit', points: [{ x: limit.throughput, y: limit.latency.p99Us / 1000, label: `b${limit.batchSize}` }] }] : []),
    ],
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  const { tokenizerDir, modelPath } = setupExample({ log });
  // Inside the workspace (tmp/ is git-ignored) so the copied model.ts files resolve their npm
  // imports (@huggingface/transformers) from the workspace's node_modules, as the example's do.
  mkdirSync(join(REPO, 'tmp'), { recursive: true });
  const root = mkdtempSync(join(REPO, 'tmp', 'bench-'));
  try {
    log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, node ${process.version}`);
    log(`model: bert_classifier hidden ${EXAMPLE_SHAPE.hidden}, ${EXAMPLE_SHAPE.layers} layers, ${EXAMPLE_SHAPE.heads} heads; ${SENTENCES.length} sentences cycled`);
    log(ORT_SETTINGS);
    log(`windows: ${ROUNDS} rounds per level, each ${WARMUP_MS} ms warm-up + ${(MEASURE_MS / ROUNDS).toFixed(0)} ms measured per configuration; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    const configs: ConfigResult[] = [];
    let limit: LimitResult | undefined;
    const limitMs = Math.max(1000, MEASURE_MS / 2);
    if (GROUPS.has('seed')) {
      // (e) is measured before and after the group it is compared with, and the two sweeps averaged.
      log('(e) limit: tokenizer + ONNX session in one process (before the group)');
      const limitBefore = await measureLimit(tokenizerDir, modelPath, SENTENCES, limitMs);
      log(`  (e) ${limitBefore.sweep.map((s) => `b${s.batchSize}: ${s.throughput.toFixed(0)}/s`).join('  ')}\n`);
      configs.push(
        ...(await group([
          ['(a)', () => tritiumTarget(root, '(a)', 'pipeline batching: the seed\'s sentiment_ensemble', 'pipeline')],
          ["(a')", () => tritiumTarget(root, "(a')", 'pipeline batching tuned for this CPU: preferred batch 8, 1 ms max queue delay', 'pipeline-tuned')],
          ['(s)', () => tritiumTarget(root, '(s)', 'the example as shipped (npm start): the seed\'s config with adaptive batching (tritium.batching: adaptive)', 'shipped')],
          ['(t)', () => tritiumTarget(root, '(t)', 'the seed\'s config with length-aware batching (tritium.batch_tokens)', 'pipeline-tokens')],
          ['(b)', () => tritiumTarget(root, '(b)', 'per-step ensemble: tokenizer and bert_classifier batch separately', 'per-step')],
          ['(c)', () => tritiumTarget(root, '(c)', 'no batching anywhere', 'no-batching')],
          ['(d)', () => microserviceTarget(root, tokenizerDir)],
        ])),
      );
      log('(e) limit: tokenizer + ONNX session in one process (after the group)');
      const limitAfter = await measureLimit(tokenizerDir, modelPath, SENTENCES, limitMs);
      log(`  (e) ${limitAfter.sweep.map((s) => `b${s.batchSize}: ${s.throughput.toFixed(0)}/s`).join('  ')}\n`);
      limit = meanLimit(limitBefore, limitAfter);
    }
    let mixed: MixedRun | undefined;
    if (GROUPS.has('mixed')) {
      const texts: MixedText[] = mixedTexts(tokenizerDir, MIXED_COUNT, MIXED_SEED);
      const summary = lengthSummary(texts);
      log(
        `mixed-length workload: ${texts.length} texts (seed ${MIXED_SEED}), tokens mean ${summary.mean.toFixed(1)}, ` +
          `p50 ${summary.p50}, p90 ${summary.p90}, p99 ${summary.p99}, max ${summary.max}`,
      );
      const plain = texts.map((t) => t.text);
      log('(e-t) limit on the mixed texts: tokenizer + ONNX session in one process, padded to the longest (before the group)');
      const before = await measureLimit(tokenizerDir, modelPath, plain, limitMs);
      log(`  (e-t) ${before.sweep.map((s) => `b${s.batchSize}: ${s.throughput.toFixed(0)}/s`).join('  ')}\n`);
      configs.push(
        ...(await group([
          ['(a-mix)', () => tritiumTarget(root, '(a-mix)', 'mixed-length texts: the seed\'s pipeline', 'pipeline', 'onnx', plain)],
          ['(t-mix)', () => tritiumTarget(root, '(t-mix)', 'mixed-length texts: length-aware batching (tritium.batch_tokens)', 'pipeline-tokens', 'onnx', plain)],
        ])),
      );
      log('(e-t) limit on the mixed texts (after the group)');
      const after = await measureLimit(tokenizerDir, modelPath, plain, limitMs);
      log(`  (e-t) ${after.sweep.map((s) => `b${s.batchSize}: ${s.throughput.toFixed(0)}/s`).join('  ')}\n`);
      mixed = { limit: meanLimit(before, after), lengths: texts.map((t) => t.tokens) };
    }
    if (GROUPS.has('gpu')) {
      configs.push(
        ...(await group([
          ['(f-a)', () => tritiumTarget(root, '(f-a)', 'GPU-shaped: pipeline batching, bert_classifier = gpu_sim (4 ms + 0.02 ms/row)', 'pipeline', 'gpu_sim')],
          ['(f-c)', () => tritiumTarget(root, '(f-c)', 'GPU-shaped: no batching anywhere', 'no-batching', 'gpu_sim')],
          ['(f-d)', () => microserviceTarget(root, tokenizerDir, '(f-d)', 'gpu_sim')],
        ])),
      );
    }

    const table = report(configs, limit, mixed?.limit);
    const rs = ratios(configs, limit, mixed);
    log(table.text);
    log('');
    for (const r of rs) log(`${r.pass ? 'PASS' : 'MISS'}  ${r.label}: ${shown(r)}  ${r.detail}`);
    const agreement = limit ? compareWithPrevious(join(REPO, 'tmp', 'bench-cpu-ratios.json'), cpuRatios(configs, limit)) : undefined;
    const agreementText = !limit
      ? 'CPU ratios: not compared (a reduced run without the seed group).'
      : !agreement
      ? 'CPU ratios: no previous run to compare with (run the bench again back to back to check they agree within 5%).'
      : agreement.moved.length === 0
        ? `CPU ratios agree with the previous run within 5% (${agreement.compared} compared: CPU per inference / (e)'s, per configuration and concurrency).`
        : `CPU ratios DISAGREE with the previous run by more than 5% for ${agreement.moved.length} of ${agreement.compared}: ` +
          agreement.moved.map((m) => `${m.key} ${m.previous.toFixed(2)} -> ${m.now.toFixed(2)}`).join(', ');
    log(agreementText);

    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, 'benchmarks.svg'), plot(configs, limit));
    writeFileSync(join(OUT, 'benchmarks.md'), markdown(configs, limit, mixed, table.markdown, rs, (performance.now() - started) / 1000, agreementText));
    const where = relative(REPO, OUT);
    log(`\nwrote ${where}/benchmarks.md and ${where}/benchmarks.svg (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    if (where !== 'docs') log('(docs/ is unchanged: `npm run bench -- --write-docs` writes the report there)');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Measured facts that explain the ratios (written into docs/benchmarks.md). */
function analysis(configs: readonly ConfigResult[], limit: LimitResult | undefined): string[] {
  const by = (key: string) => configs.find((c) => c.key === key);
  const at = (key: string, c: number) => by(key)?.rows.find((r) => r.concurrency === c);
  if (!limit || !at('(a)', 64) || !at('(c)', 64) || !at('(d)', 64)) return ['- (a reduced run: the seed group at concurrency 64 was not measured)'];
  const b1 = limit.sweep.find((s) => s.batchSize === 1)!;
  const headroom = limit.throughput / b1.throughput;
  const a = at('(a)', 64)!;
  const c = at('(c)', 64)!;
  const d = at('(d)', 64)!;
  const cores = availableParallelism();
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  const total = (r: Row) => r.cpu.server + r.cpu.service + r.cpu.client;
  const aServer = a.server;
  const aCompute = aServer.bert.computeInputUs + aServer.bert.computeInferUs + aServer.bert.computeOutputUs;
  return [
    `- **Batching headroom of the model itself.** In one process, tokenizer + ONNX Runtime handle ${b1.throughput.toFixed(0)} sentences/s at batch 1 ` +
      `and ${limit.throughput.toFixed(0)}/s at batch ${limit.batchSize}: batching makes each sentence ${headroom.toFixed(2)}× cheaper on this CPU ` +
      '(ONNX Runtime\'s CPU GEMMs are already efficient at a few rows, and a batch pays for padding to its longest sentence). ' +
      'A batched server can beat an unbatched one by more than that only by amortizing per-request costs; the seed\'s 3× claim is about GPUs, where a batch of 64 costs about what one sentence does.',
    `- **(a) at concurrency 64:** bert_classifier ran batches of ${a.modelBatch.toFixed(1)}, each taking ${(aCompute / 1000).toFixed(2)} ms of compute ` +
      `(Triton's statistics charge every request of a batch the batch's compute time; ${(aCompute / 1000 / Math.max(a.modelBatch, 1)).toFixed(2)} ms per sentence), ` +
      `after ${(aServer.bert.queueUs / 1000).toFixed(2)} ms in its queue; the ensemble's own request time was ${((aServer.ensemble?.avgRequestUs ?? 0) / 1000).toFixed(2)} ms ` +
      `of ${(a.latency.avgUs / 1000).toFixed(2)} ms seen by the client. CPU: server ${a.cpu.server.toFixed(2)}, load generator ${a.cpu.client.toFixed(2)} of ${cores} cores (${pct(total(a) / cores)} busy).`,
    `- **Padding.** The sentences average ${limit.tokens.mean.toFixed(1)} tokens; padded to the longest of their batch they cost ` +
      `${limit.tokens.padded.map((p) => `${p.perSentence.toFixed(1)} tokens each at batch ${p.batchSize}`).join(' and ')} ` +
      `(${limit.tokens.padded.map((p) => `${(p.perSentence / limit.tokens.mean).toFixed(2)}×`).join(', ')}), and attention grows with the square of the length: ` +
      `batching variable-length text on a CPU buys GEMM efficiency with extra tokens. Per sentence, (c)'s batch-1 executions took ` +
      `${((c.server.bert.computeInputUs + c.server.bert.computeInferUs + c.server.bert.computeOutputUs) / 1000).toFixed(2)} ms against (a)'s ${(aCompute / 1000 / Math.max(a.modelBatch, 1)).toFixed(2)} ms.`,
    `- **(c) at concurrency 64:** one execution per request; CPU: server ${c.cpu.server.toFixed(2)}, load generator ${c.cpu.client.toFixed(2)} (${pct(total(c) / cores)} busy).`,
    `- **(d) at concurrency 64:** the service spent ${d.cpu.service.toFixed(2)} cores tokenizing and on its gRPC client, the server ${d.cpu.server.toFixed(2)} with batch-1 executions ` +
      `(${pct(total(d) / cores)} busy).`,
    `- **This machine:** load average ${loadavg().map((l) => l.toFixed(1)).join(', ')} on ${cores} cores when the run ended. ` +
      'When the cores are shared with other work, every configuration gets a varying slice of them and the ratios move with it; the CPU columns show how much each process actually got ' +
      `(at concurrency 64: (a) ${total(a).toFixed(2)} cores, (c) ${total(c).toFixed(2)}, (d) ${total(d).toFixed(2)}). On an oversubscribed machine the scheduler shares CPU per runnable ` +
      'thread, so a configuration whose threads are all busy (no batching: every tokenizer worker and the model each run their own request) gets a larger slice than a batched one whose workers wait for the next batch.',
  ];
}

function markdown(
  configs: readonly ConfigResult[],
  limit: LimitResult | undefined,
  mixed: MixedRun | undefined,
  table: string,
  rs: readonly Ratio[],
  seconds: number,
  agreement: string,
): string {
  const sweep = (l: LimitResult) => l.sweep.map((s) => `b${s.batchSize} ${s.throughput.toFixed(0)}/s`).join(', ');
  const lengths = mixed ? [...mixed.lengths].sort((a, b) => a - b) : [];
  const lines = [
    '# Benchmarks: the seed\'s pipeline, side by side',
    '',
    `Generated by \`npm run bench -- --write-docs\` (bench/run-all.ts) in one run of ${seconds.toFixed(0)} s on ${cpus()[0]?.model ?? 'unknown CPU'}, ` +
      `${availableParallelism()} cores, Node ${process.version}. Model: the example's bert_classifier (hidden ${EXAMPLE_SHAPE.hidden}, ` +
      `${EXAMPLE_SHAPE.layers} layers, ${EXAMPLE_SHAPE.heads} heads, FFN ${EXAMPLE_SHAPE.intermediate}) on ONNX Runtime CPU; ${SENTENCES.length} review-like sentences cycled; ` +
      `closed loop, one text per request, concurrency ${LEVELS.join(', ')}; at each level the configurations of a group (the seed's sentences: (a)–(d); the mixed-length texts; then (f)), all running at once, take turns in ${ROUNDS} rounds of ` +
      `${WARMUP_MS} ms warm-up then ${(MEASURE_MS / ROUNDS).toFixed(0)} ms measured (${MEASURE_MS} ms per configuration and level), so their ratios are measured side by side; ` +
      '(e) is the mean of two sweeps, before and after its group. The load generator runs on the same cores as the server. ' +
      `Load average when the run ended: ${loadavg().map((l) => l.toFixed(1)).join(', ')} (other work on the machine skews every number).`,
    '',
    ...configs.map((c) => `- **${c.key}** ${c.name}`),
    ...(limit ? ['- **(e)** the limit: tokenizer + ONNX session in one process, tight loop at the best batch size ' + `(sweep: ${sweep(limit)})`] : []),
    ...(mixed
      ? [
          `- **(e-t)** the same limit on the mixed-length texts, each batch padded to its longest (sweep: ${sweep(mixed.limit)})`,
          '',
          `The mixed-length workload (\`bench/pipeline/mixed-texts.ts\`, seed ${MIXED_SEED}): ${lengths.length} review-like texts, ` +
            `tokens (with [CLS] and [SEP]) mean ${(lengths.reduce((a, b) => a + b, 0) / Math.max(1, lengths.length)).toFixed(1)}, ` +
            `p50 ${lengths[Math.floor(lengths.length / 2)]}, p99 ${lengths[Math.floor(lengths.length * 0.99)]}, max ${lengths[lengths.length - 1]}. ` +
            '(t-mix) counts its tokens in the ensemble\'s statistics (`tritium.tokens`): padding efficiency = real / padded tokens.',
        ]
      : []),
    '',
    ORT_SETTINGS,
    '',
    '`model batch` is bert_classifier\'s inferences per execution during the window (server statistics); `cpu` columns are CPU-seconds per second of each process (server, side service, load generator); `cpu ms/inf` is CPU milliseconds per inference, all three summed (noise moves throughput far more than it moves this).',
    '',
    table,
    '',
    '![throughput vs p99 latency](benchmarks.svg)',
    '',
    '## Where the time goes (concurrency 64)',
    '',
    'Server statistics over the measured window (Triton\'s statistics extension: per-request averages of each model; compute = input + infer + output; batch = inferences per execution), and CPU-seconds per second of the server, the side service and the load generator.',
    '',
    profileTable(configs, 64),
    '',
    '## Reading the numbers',
    '',
    ...analysis(configs, limit),
    '',
    '## Targets',
    '',
    ...rs.map((r) => `- ${r.pass ? 'met' : '**missed**'}: ${r.label} = ${shown(r)}; ${r.detail}`),
    '',
    agreement,
    '',
  ];
  return `${lines.join('\n')}\n`;
}

await main();
