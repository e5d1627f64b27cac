/**
 * Two builds of Tritium side by side on the seed's pipeline: did a change move CPU per inference?
 * Each build's `tritium serve` serves the same repository (by default the seed's configs as
 * written, bench/pipeline/repositories.ts `pipeline`); both stay up, and short windows alternate
 * between them (order rotated each round) so the machine's other load hits both alike. Per window:
 * completions, CPU-seconds of the serving process tree (main thread, workers, ONNX threads, child
 * processes) and the classifier's mean batch size (more rows per execution costs less per row, so
 * a build that forms smaller batches pays for it here). Prints each build's pooled CPU per
 * inference and throughput, and the per-round paired ratio new/base (its median and range).
 *
 * Run (each directory a built checkout, `npm ci && npm run build`):
 *   node bench/dist/two-builds.bench.js --base=/path/to/old/checkout [--new=.] [--rounds=10]
 *     [--seconds=5] [--concurrency=64] [--repo=<model repository>] [--model=sentiment_ensemble]
 *     [--warmup-seconds=15] (unmeasured load on each fresh server before round 0)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedLoop } from '@tritium/perf';
import { treeCpuSeconds } from './pipeline/cpu.ts';
import { roundOrder } from './pipeline/measure.ts';
import { writeRepository } from './pipeline/repositories.ts';
import { SENTENCES } from './pipeline/sentences.ts';

const arg = (name: string, fallback?: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROUNDS = Number(arg('rounds', '10'));
const WINDOW_MS = Number(arg('seconds', '5')) * 1000;
const WARMUP_MS = 1500;
const SERVER_WARMUP_MS = Number(arg('warmup-seconds', '15')) * 1000;
const CONCURRENCY = Number(arg('concurrency', '64'));
const MODEL = arg('model', 'sentiment_ensemble')!;
const CLASSIFIER = 'bert_classifier';

interface Build {
  readonly label: 'base' | 'new';
  readonly dir: string;
}

interface Served extends Build {
  readonly child: ChildProcess;
  readonly httpPort: number;
  readonly metricsPort: number;
  readonly log: () => string;
}

interface Sample {
  readonly completions: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly meanBatch: number;
}

function buildsFromArgs(): Build[] {
  const base = arg('base');
  if (!base) {
    console.error('two-builds: --base=<a built checkout> is required (see the comment at the top of bench/two-builds.bench.ts)');
    process.exit(2);
  }
  const builds: Build[] = [
    { label: 'base', dir: path.resolve(base) },
    { label: 'new', dir: path.resolve(arg('new', ROOT)!) },
  ];
  for (const b of builds) {
    if (!existsSync(path.join(b.dir, 'apps/server/bin/tritium.mjs'))) {
      console.error(`two-builds: --${b.label}=${b.dir} holds no apps/server/bin/tritium.mjs (not a built checkout)`);
      process.exit(2);
    }
  }
  return builds;
}

async function waitFor(pattern: RegExp, log: () => string, child: ChildProcess): Promise<number> {
  for (let i = 0; i < 2400; i++) {
    const port = pattern.exec(log())?.[1];
    if (port) return Number(port);
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server did not start:\n${log()}`);
}

async function serve(build: Build, repository: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    [
      path.join(build.dir, 'apps/server/bin/tritium.mjs'), 'serve', '--model-repository', repository,
      '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1',
      '--http-port=0', '--grpc-port=0', '--metrics-port=0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const log = () => text;
  const httpPort = await waitFor(/Started HTTPService at [^:]+:(\d+)/, log, child);
  const metricsPort = await waitFor(/Started Metrics Service at [^:]+:(\d+)/, log, child);
  return { ...build, child, httpPort, metricsPort, log };
}

async function classifierCounts(metricsPort: number): Promise<{ rows: number; executions: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const read = (metric: string) =>
    Number(new RegExp(`^${metric}\\{model="${CLASSIFIER}",version="1"\\} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rows: read('nv_inference_count'), executions: read('nv_inference_exec_count') };
}

/** Unmeasured load on a fresh server (see run-all.ts warmServer): its code compiles before round 0. */
async function warm(server: Served): Promise<void> {
  const url = `http://127.0.0.1:${server.httpPort}/v2/models/${MODEL}/infer`;
  let next = 0;
  const load = closedLoop(CONCURRENCY, async () => {
    const body = JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: [SENTENCES[next++ % SENTENCES.length]] }] });
    const reply = await fetch(url, { method: 'POST', headers: { 'accept-encoding': 'identity' }, body });
    await reply.arrayBuffer();
  });
  await new Promise((r) => setTimeout(r, SERVER_WARMUP_MS));
  await load.stop();
  if (load.error) throw load.error;
}

async function measure(server: Served): Promise<Sample> {
  let next = 0;
  const body = () =>
    JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: [SENTENCES[next++ % SENTENCES.length]] }] });
  const url = `http://127.0.0.1:${server.httpPort}/v2/models/${MODEL}/infer`;
  const load = closedLoop(CONCURRENCY, async () => {
    // fetch asks for gzip unless told: the server would compress every reply, which tritonclient
    // (and run-all.ts's client) never asks for, and which is the HTTP edge's cost, not the pipeline's.
    const reply = await fetch(url, { method: 'POST', headers: { 'accept-encoding': 'identity' }, body: body() });
    await reply.arrayBuffer();
    if (reply.status !== 200) throw new Error(`${server.label}: HTTP ${reply.status}`);
  });
  try {
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const before = await classifierCounts(server.metricsPort);
    load.drain();
    const cpu0 = treeCpuSeconds(server.child.pid!);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const completions = load.drain().length;
    const cpuSeconds = treeCpuSeconds(server.child.pid!) - cpu0;
    const seconds = (performance.now() - t0) / 1000;
    const after = await classifierCounts(server.metricsPort);
    if (load.error) throw load.error;
    return { completions, seconds, cpuSeconds, meanBatch: (after.rows - before.rows) / (after.executions - before.executions) };
  } finally {
    await load.stop();
  }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const usPer = (s: Sample) => (s.cpuSeconds / s.completions) * 1e6;

async function main(): Promise<void> {
  const builds = buildsFromArgs();
  const scratch = mkdtempSync(path.join(tmpdir(), 'tritium-two-builds-'));
  const repository = arg('repo') ?? writeRepository(scratch, 'pipeline');
  const servers: Served[] = [];
  try {
    for (const b of builds) servers.push(await serve(b, repository));
    for (const s of servers) await warm(s);
    const samples = new Map<string, Sample[]>(builds.map((b) => [b.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of roundOrder(servers, round)) {
        const s = await measure(server);
        samples.get(server.label)!.push(s);
        console.log(
          `round ${round} ${server.label}: ${(s.completions / s.seconds).toFixed(0)}/s, ` +
            `${usPer(s).toFixed(0)} us CPU/inference, classifier batch ${s.meanBatch.toFixed(1)}`,
        );
      }
    }
    const pooled = (label: string) => {
      const xs = samples.get(label)!;
      const sum = (f: (s: Sample) => number) => xs.reduce((n, s) => n + f(s), 0);
      return { rate: sum((s) => s.completions) / sum((s) => s.seconds), us: (sum((s) => s.cpuSeconds) / sum((s) => s.completions)) * 1e6, batch: sum((s) => s.meanBatch) / xs.length };
    };
    for (const b of builds) {
      const p = pooled(b.label);
      console.log(`${b.label} (${b.dir}): ${p.rate.toFixed(0)} inferences/s, ${p.us.toFixed(0)} us CPU/inference pooled, mean classifier batch ${p.batch.toFixed(1)}`);
    }
    const paired = samples.get('new')!.map((s, i) => usPer(s) / usPer(samples.get('base')![i]!));
    const higher = paired.filter((r) => r > 1).length;
    console.log(
      `new/base CPU per inference: pooled ${((pooled('new').us / pooled('base').us - 1) * 100).toFixed(1)}%, ` +
        `paired rounds median ${((median(paired) - 1) * 100).toFixed(1)}% ` +
        `(range ${((Math.min(...paired) - 1) * 100).toFixed(1)}% .. ${((Math.max(...paired) - 1) * 100).toFixed(1)}%, new higher in ${higher} of ${paired.length})`,
    );
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
