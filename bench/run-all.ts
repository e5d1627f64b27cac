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
 * BENCH_WARMUP_MS (default 1000, before each window), BENCH_SERVER_WARMUP_MS (default 15000, once per
 * configuration after it started, at the highest level: see warmServer), BENCH_ROUNDS (default 3); for a reduced run
 * on a busy machine, BENCH_LEVELS (default 1,16,64,256), BENCH_GROUPS (default seed,mixed,gpu) and
 * BENCH_ONLY (configuration keys, e.g. "(a),(s),(c)"; default all).
 *
 * This file starts the configurations and takes their turns; bench/pipeline/ holds the parts
 * (windows, CPU, the in-process limit, repositories, and report.ts: table, targets, markdown).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addCounters, breakdown, closedLoop, createPerfClient, snapshot, type ModelCounters, type StatsSnapshot } from '@tritium/perf';
import { EXAMPLE_SHAPE, setupExample } from '@tritium/example-setup';
import { cpuSeconds, threadCpuSeconds } from './pipeline/cpu.ts';
import { meanLimit, measureLimit, sweepLine, type LimitResult } from './pipeline/limit.ts';
import { measureWindow, pointOf, roundOrder, type Window } from './pipeline/measure.ts';
import { microserviceTarget, tritiumTarget, type Target } from './pipeline/targets.ts';
import type { CpuInstances } from './pipeline/repositories.ts';
import { reportDir } from './pipeline/report-dir.ts';
import { compareWithPrevious } from './pipeline/cpu-agreement.ts';
import { SENTENCES } from './pipeline/sentences.ts';
import { lengthSummary, MIXED_SEED, mixedTexts, type MixedText } from './pipeline/mixed-texts.ts';
import { tokenCounts, type TokenTotals } from './pipeline/tokens.ts';
import { cpuRatios, markdown, ortSettings, plot, ratios, report, shown, type ConfigResult, type MixedRun, type Row } from './pipeline/report.ts';

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
/** Unmeasured load on each configuration once it started, before its group's first window (see warmServer). */
const SERVER_WARMUP_MS = Number(process.env['BENCH_SERVER_WARMUP_MS'] ?? 15000);
/**
 * bert_classifier's instance group in the mixed group (repositories.ts CpuInstances): Triton's CPU
 * default (`cpu-default`, 2 instances of ONNX Runtime) unless BENCH_MIXED_INSTANCES=seed-count.
 */
const MIXED_INSTANCES: CpuInstances = process.env['BENCH_MIXED_INSTANCES'] === 'seed-count' ? 'seed-count' : 'cpu-default';
/** Intra-op thread counts (e-t) tries: 1, what each cpu-default instance gets, and every core. */
const MIXED_LIMIT_THREADS = [...new Set([1, Math.max(1, Math.floor(availableParallelism() / 2)), availableParallelism()])];
/** Windows per configuration and concurrency; MEASURE_MS is split among them. */
const ROUNDS = Math.max(1, Math.floor(Number(process.env['BENCH_ROUNDS'] ?? 3)));


const log = (line: string) => process.stdout.write(`${line}\n`);
const targetContext = { log, maxConcurrency: Math.max(...LEVELS) };

/** Statistics of the pipeline's models (whichever of them the server has). */
async function stats(url: string): Promise<StatsSnapshot> {
  const client = createPerfClient('http', url);
  try {
    return await snapshot(client, ['sentiment_ensemble', 'tokenizer', 'bert_classifier']);
  } finally {
    client.close();
  }
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

/**
 * Loads a freshly started configuration at the highest level for SERVER_WARMUP_MS, unmeasured. A new
 * server compiles its hot paths (main thread and each worker's isolate, V8's background threads)
 * during its first few thousand inferences: on the mixed texts at c=64, CPU per inference fell from
 * ~4.6 ms in the first 12 s to ~3 ms after (load 3-4). Windows of a few seconds right after start
 * would charge that one-off compilation to every inference of a server that runs for hours.
 */
async function warmServer(t: Target): Promise<void> {
  if (SERVER_WARMUP_MS <= 0) return;
  log(`${t.key}: warming up for ${SERVER_WARMUP_MS} ms at c=${Math.max(...LEVELS)} (unmeasured)`);
  const load = closedLoop(Math.max(...LEVELS), t.send);
  await new Promise((r) => setTimeout(r, SERVER_WARMUP_MS));
  await load.stop();
  if (load.error) throw load.error;
}

/** Starts a group's configurations, measures them side by side, and stops them whatever happens. */
async function group(starts: ReadonlyArray<readonly [string, () => Promise<Target>]>): Promise<ConfigResult[]> {
  const targets: Target[] = [];
  try {
    for (const [key, start] of starts) if (!ONLY || ONLY.has(key)) targets.push(await start());
    if (targets.length === 0) return [];
    for (const t of targets) await warmServer(t);
    return await sweepSideBySide(targets);
  } finally {
    for (const t of targets) await t.close();
  }
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
    log(ortSettings(MIXED_INSTANCES));
    log(`windows: each configuration warmed ${SERVER_WARMUP_MS} ms once, then ${ROUNDS} rounds per level, each ${WARMUP_MS} ms warm-up + ${(MEASURE_MS / ROUNDS).toFixed(0)} ms measured per configuration; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    const configs: ConfigResult[] = [];
    let limit: LimitResult | undefined;
    const limitMs = Math.max(1000, MEASURE_MS / 2);
    if (GROUPS.has('seed')) {
      // (e) is measured before and after the group it is compared with, and the two sweeps averaged.
      log('(e) limit: tokenizer + ONNX session in one process (before the group)');
      const limitBefore = await measureLimit(tokenizerDir, modelPath, SENTENCES, limitMs);
      log(`  (e) ${sweepLine(limitBefore)}\n`);
      configs.push(
        ...(await group([
          ['(a)', () => tritiumTarget(targetContext, root, '(a)', 'pipeline batching: the seed\'s sentiment_ensemble', 'pipeline')],
          ["(a')", () => tritiumTarget(targetContext, root, "(a')", 'pipeline batching tuned for this CPU: preferred batch 8, 1 ms max queue delay', 'pipeline-tuned')],
          ['(s)', () => tritiumTarget(targetContext, root, '(s)', 'the example as shipped (npm start): the seed\'s config with adaptive batching (tritium.batching: adaptive)', 'shipped')],
          ['(t)', () => tritiumTarget(targetContext, root, '(t)', 'the seed\'s config with length-aware batching (tritium.batch_tokens)', 'pipeline-tokens')],
          ['(b)', () => tritiumTarget(targetContext, root, '(b)', 'per-step ensemble: tokenizer and bert_classifier batch separately', 'per-step')],
          ['(c)', () => tritiumTarget(targetContext, root, '(c)', 'no batching anywhere', 'no-batching')],
          ['(d)', () => microserviceTarget(targetContext, root, tokenizerDir)],
        ])),
      );
      log('(e) limit: tokenizer + ONNX session in one process (after the group)');
      const limitAfter = await measureLimit(tokenizerDir, modelPath, SENTENCES, limitMs);
      log(`  (e) ${sweepLine(limitAfter)}\n`);
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
      const before = await measureLimit(tokenizerDir, modelPath, plain, limitMs, MIXED_LIMIT_THREADS);
      log(`  (e-t) ${sweepLine(before)}\n`);
      const instances = MIXED_INSTANCES === 'cpu-default' ? "bert_classifier: Triton's CPU instance group default" : "bert_classifier: the seed's count 1";
      configs.push(
        ...(await group([
          ['(a-mix)', () => tritiumTarget(targetContext, root, '(a-mix)', `mixed-length texts: the seed's pipeline; ${instances}`, 'pipeline', 'onnx', plain, MIXED_INSTANCES)],
          ['(t-mix)', () => tritiumTarget(targetContext, root, '(t-mix)', `mixed-length texts: length-aware batching (tritium.batch_tokens); ${instances}`, 'pipeline-tokens', 'onnx', plain, MIXED_INSTANCES)],
        ])),
      );
      log('(e-t) limit on the mixed texts (after the group)');
      const after = await measureLimit(tokenizerDir, modelPath, plain, limitMs, MIXED_LIMIT_THREADS);
      log(`  (e-t) ${sweepLine(after)}\n`);
      mixed = { limit: meanLimit(before, after), lengths: texts.map((t) => t.tokens) };
    }
    if (GROUPS.has('gpu')) {
      configs.push(
        ...(await group([
          ['(f-a)', () => tritiumTarget(targetContext, root, '(f-a)', 'GPU-shaped: pipeline batching, bert_classifier = gpu_sim (4 ms + 0.02 ms/row)', 'pipeline', 'gpu_sim')],
          ['(f-c)', () => tritiumTarget(targetContext, root, '(f-c)', 'GPU-shaped: no batching anywhere', 'no-batching', 'gpu_sim')],
          ['(f-d)', () => microserviceTarget(targetContext, root, tokenizerDir, '(f-d)', 'gpu_sim')],
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
    writeFileSync(
      join(OUT, 'benchmarks.md'),
      markdown(configs, limit, mixed, table.markdown, rs, (performance.now() - started) / 1000, agreementText, { levels: LEVELS, rounds: ROUNDS, warmupMs: WARMUP_MS, serverWarmupMs: SERVER_WARMUP_MS, measureMs: MEASURE_MS, mixedInstances: MIXED_INSTANCES }),
    );
    const where = relative(REPO, OUT);
    log(`\nwrote ${where}/benchmarks.md and ${where}/benchmarks.svg (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    if (where !== 'docs') log('(docs/ is unchanged: `npm run bench -- --write-docs` writes the report there)');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
