/**
 * The model.ts author's loop, timed as an author lives it:
 *   - edit-to-serving of `tritium dev`: a model.ts is saved (a new release string), and the time
 *     until an HTTP request is answered by the new version; 20 saves, median and max; requests
 *     flow the whole time (two closed loops) and every failed one is counted;
 *   - a warm `tritium model run` (answered by that dev server): the whole command, spawn to exit,
 *     10 runs, median and max.
 * CPU seconds are reported beside the times: the dev server's process tree (its instances
 * included) per reload, and the run command's own process per run.
 *
 * Run: node bench/dist/dev-reload.bench.js [tritium dev flags]   (after `npm run build`;
 * BENCH_SAVES, default 20; BENCH_RUNS, default 10; e.g. `--model-type-check=off` to see what the
 * type check costs a reload)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRITIUM_BIN } from '@tritium/example-setup';
import { treeCpuSeconds } from './pipeline/cpu.ts';

const SAVES = Number(process.env['BENCH_SAVES'] ?? 20);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 10);

const CONFIG = `name: "echo"
backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`;
const MODEL = (release: string): string => `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const text = r.inputs()[0]!.strings();
      return new InferenceResponse([new Tensor('OUT', text.map((t) => t + ':${release}'), [text.length, 1])]);
    });
  }
}
`;

/** CPU seconds of this process's reaped children (cutime + cstime), from /proc. */
function reapedChildrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const stats = (xs: number[]): string => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms`;
};

async function infer(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/v2/models/echo/infer`, {
    method: 'POST',
    body: JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: ['x'] }] }),
  });
  const body = (await response.json()) as { outputs?: { data: string[] }[]; error?: string };
  if (!response.ok) throw new Error(`${response.status}: ${body.error}`);
  return body.outputs![0]!.data[0]!;
}

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-dev-bench-'));
const modelFile = path.join(repo, 'echo', '1', 'model.ts');
mkdirSync(path.dirname(modelFile), { recursive: true });
writeFileSync(path.join(repo, 'echo', 'config.pbtxt'), CONFIG);
writeFileSync(modelFile, MODEL('r0'));

const dev = spawn(process.execPath, [TRITIUM_BIN, 'dev', repo, '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0', ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let log = '';
dev.stdout.on('data', (d: Buffer) => (log += d.toString()));
dev.stderr.on('data', (d: Buffer) => (log += d.toString()));
try {
  let port: number | undefined;
  const readyBy = Date.now() + 120_000;
  while ((await (port ? infer(port).catch(() => '') : Promise.resolve(''))) !== 'x:r0') {
    if (Date.now() > readyBy || dev.exitCode !== null) throw new Error(`tritium dev did not serve the model:\n${log}`);
    port ??= Number(/Started HTTPService at [^\s:]+:(\d+)/.exec(log)?.[1]) || undefined;
    await new Promise((r) => setTimeout(r, 20));
  }
  const http = port!;

  let flowing = true;
  let served = 0;
  const failures: string[] = [];
  const traffic = Array.from({ length: 2 }, async () => {
    while (flowing) await infer(http).then(() => served++, (e: Error) => failures.push(e.message));
  });

  const reloads: number[] = [];
  const cpuBefore = treeCpuSeconds(dev.pid!);
  for (let i = 1; i <= SAVES; i++) {
    const expected = `x:r${i}`;
    const started = performance.now();
    writeFileSync(modelFile, MODEL(`r${i}`));
    while ((await infer(http).catch(() => '')) !== expected) {
      if (performance.now() - started > 60_000) throw new Error(`save ${i} was not served in 60 s:\n${log.slice(-4000)}`);
    }
    reloads.push(performance.now() - started);
    // Past the debounce, so the next save is its own change.
    await new Promise((r) => setTimeout(r, 200));
  }
  const reloadCpu = (treeCpuSeconds(dev.pid!) - cpuBefore) / SAVES;
  flowing = false;
  await Promise.all(traffic);

  const runs: number[] = [];
  const runCpuBefore = reapedChildrenCpuSeconds();
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const run = spawn(process.execPath, [TRITIUM_BIN, 'model', 'run', path.join(repo, 'echo'), '--input', 'TEXT=["a","b"]'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((r) => run.once('close', r));
    if (code !== 0 || !out.includes(`a:r${SAVES}`)) throw new Error(`model run failed (exit ${code}): ${out}`);
    runs.push(performance.now() - started);
  }
  const runCpu = (reapedChildrenCpuSeconds() - runCpuBefore) / RUNS;

  console.log(`tritium dev, edit-to-serving of ${SAVES} saves of model.ts: ${stats(reloads)}; server CPU ${reloadCpu.toFixed(2)} s per reload (all its processes)`);
  console.log(`  requests during the saves: ${served} answered, ${failures.length} failed${failures.length ? ` (${failures[0]})` : ''}`);
  console.log(`warm tritium model run (answered by tritium dev), ${RUNS} runs, spawn to exit: ${stats(runs)}; ${runCpu.toFixed(2)} CPU s per run (the command's process)`);
  console.log(`${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(', ')}`);
  if (failures.length > 0) process.exitCode = 1;
} finally {
  dev.kill('SIGTERM');
  if (dev.exitCode === null) await new Promise((r) => dev.once('exit', r));
  rmSync(repo, { recursive: true, force: true });
}
