/**
 * Time to ready of the example: `tritium serve --model-repository model_repository` as a user runs
 * it, from spawn until `GET /v2/health/ready` answers 200, and the CPU the server process spent
 * until then (user + system, all its threads: the model workers included; esbuild's own process is
 * not counted). Wall time depends on what else the machine runs; CPU time much less so: both are
 * printed, with the load average.
 *
 * Run: node bench/dist/startup.bench.js   (after `npm run build` and the example's setup, which
 * `npm start` runs; BENCH_RUNS runs, default 5; extra arguments go to `tritium serve`)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_REPOSITORY, TRITIUM_BIN } from '@tritium/example-setup';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);
const TICKS_PER_SECOND = 100; // Linux USER_HZ, the unit of /proc/<pid>/stat times

/** User + system CPU seconds of a process and all its threads so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function once(extra: readonly string[]): Promise<{ wallS: number; cpuS: number }> {
  const start = performance.now();
  const child = spawn(
    process.execPath,
    [TRITIUM_BIN, 'serve', '--model-repository', DEFAULT_REPOSITORY, '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0', ...extra],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  let port: number | undefined;
  const onData = (chunk: Buffer): void => {
    log += chunk.toString();
    port ??= Number(/Started HTTPService at [^\s:]+:(\d+)/.exec(log)?.[1]) || undefined;
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    for (;;) {
      if (exited) throw new Error(`tritium serve exited before it was ready:\n${log}`);
      if (port) {
        const ready = await fetch(`http://127.0.0.1:${port}/v2/health/ready`).then((r) => r.status === 200, () => false);
        if (ready) return { wallS: (performance.now() - start) / 1000, cpuS: cpuSeconds(child.pid!) };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    if (!exited) await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const extra = process.argv.slice(2);
const wall: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const r = await once(extra);
  wall.push(r.wallS);
  cpu.push(r.cpuS);
  console.log(`run ${i + 1}: ready in ${r.wallS.toFixed(2)} s, server CPU ${r.cpuS.toFixed(2)} s (load ${os.loadavg()[0]!.toFixed(1)})`);
}
console.log(
  `example ready: median ${median(wall).toFixed(2)} s wall (min ${Math.min(...wall).toFixed(2)}), median ${median(cpu).toFixed(2)} s CPU; ` +
    `${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(', ')}`,
);
