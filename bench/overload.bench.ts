/**
 * Health checks under overload. `tritium serve` runs a model whose queue is
 * bounded (`dynamic_batching { default_queue_policy { max_queue_size } }`) and whose execute takes
 * 20 ms, so most requests are rejected (503). A load process keeps C keep-alive connections (2000 by
 * default) each sending small binary infers back to back; meanwhile this process probes
 * `/v2/health/ready` and `/v2/health/live` every 100 ms on a NEW connection each time (as kubelet
 * does), with a 10 s timeout. Reported: probe latency p50/p99/max and failures, the load's answers
 * (200, 503, other) and connection errors (resets), the kernel's accept-queue overflows during the
 * run (SYNs dropped: each costs the client a 1 s, 3 s, 7 s retransmit), the server's CPU-seconds and
 * peak RSS, and the machine's load average (this bench saturates a small machine by design).
 *
 *     npx tsc -b && node bench/dist/overload.bench.js
 *
 * Env: OVERLOAD_C (connections, default 2000), OVERLOAD_SECONDS (default 20), OVERLOAD_QUEUE (max_queue_size,
 * default 16), OVERLOAD_LOAD_NICE (the load process's nice value, default 19: it stands for clients on
 * other machines, so it gets the CPU the server leaves).
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const C = Number(process.env['OVERLOAD_C'] ?? 2000);
const SECONDS = Number(process.env['OVERLOAD_SECONDS'] ?? 20);
const QUEUE = Number(process.env['OVERLOAD_QUEUE'] ?? 16);

interface LoadReport {
  readonly statuses: Record<string, number>;
  readonly errors: Record<string, number>;
  readonly requests: number;
}

/** The load process: C connections, each sending one request after another until told to stop. */
async function runLoad(port: number, connections: number): Promise<void> {
  // In production the load comes from other machines; here it shares the server's cores. At the
  // lowest priority it takes only the CPU the server leaves (OVERLOAD_LOAD_NICE=0 to compete evenly).
  os.setPriority(Number(process.env['OVERLOAD_LOAD_NICE'] ?? 19));
  const head = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], parameters: { binary_data_size: 16 } }] }));
  const body = Buffer.concat([head, Buffer.from(new Float32Array([1, 2, 3, 4]).buffer)]);
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let requests = 0;
  let running = true;
  process.on('message', (m) => {
    if (m === 'stop') running = false;
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v2/models/busy/infer',
          agent,
          timeout: 30_000,
          headers: { 'content-length': body.length, 'inference-header-content-length': head.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      req.on('error', (e: NodeJS.ErrnoException) => {
        errors[e.code ?? e.message] = (errors[e.code ?? e.message] ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (running) {
        await one();
        requests++;
      }
    }),
  );
  agent.destroy();
  // Then leave: an open IPC channel would keep this process, and the bench waiting on it, alive.
  process.send!({ statuses, errors, requests } satisfies LoadReport, () => process.disconnect());
}

// -- the bench itself ---------------------------------------------------------------------------

const BUSY = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
const pause = new Int32Array(new SharedArrayBuffer(4));
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]): InferenceResponse[] {
    Atomics.wait(pause, 0, 0, 20); // 20 ms of "compute" per batch
    return requests.map((r) => new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', getInputTensorByName(r, 'INPUT0')!.data as Float32Array, [1, 4])] }));
  }
}
`;

function repository(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-overload-'));
  mkdirSync(path.join(dir, 'busy', '1'), { recursive: true });
  writeFileSync(
    path.join(dir, 'busy', 'config.pbtxt'),
    `backend: "python"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { default_queue_policy { max_queue_size: ${QUEUE} } }
`,
  );
  writeFileSync(path.join(dir, 'busy', '1', 'model.ts'), BUSY);
  return dir;
}

function probe(port: number, pathName: string): Promise<{ ok: boolean; ms: number; error?: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    // agent: false → a new connection per probe, as kubelet's HTTP probes.
    const req = http.get({ host: '127.0.0.1', port, path: pathName, agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ ok: false, ms: performance.now() - started, error: e.code ?? e.message }));
  });
}

/** The health listener's port, from its start line (it is logged after the HTTP one). */
async function healthPort(logs: () => string): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const m = /Started Health Service at [^:\s]+:(\d+)/.exec(logs());
    if (m) return Number(m[1]);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no health listener in the server's log:\n${logs()}`);
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function peakRss(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** The kernel's count of connections dropped because an accept queue was full (all sockets). */
function listenOverflows(): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
  const keys = lines[0]!.split(' ');
  return Number(lines[1]!.split(' ')[keys.indexOf('ListenOverflows')]);
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function main(): Promise<void> {
  const { startTritium } = await import('@tritium/example-setup');
  const repo = repository();
  // OVERLOAD_PROBE=health: probe the --health-port listener (its own thread) instead of the HTTP port.
  const onHealthPort = process.env['OVERLOAD_PROBE'] === 'health';
  const server = await startTritium(repo, onHealthPort ? { args: ['--health-port', '0', '--health-address', '127.0.0.1'] } : {});
  const loadPort = Number(server.httpUrl.split(':')[1]);
  const port = onHealthPort ? await healthPort(server.logs) : loadPort;
  const pid = server.process.pid!;
  try {
    const quiet: number[] = [];
    for (let i = 0; i < 20; i++) quiet.push((await probe(port, '/v2/health/ready')).ms);
    const cpu0 = cpuSeconds(pid);
    const overflows0 = listenOverflows();
    const load = fork(fileURLToPath(import.meta.url), ['load', String(loadPort), String(C)], { stdio: 'inherit' });
    const report = new Promise<LoadReport>((resolve) => load.once('message', (m) => resolve(m as LoadReport)));
    const latencies: number[] = [];
    const failures: string[] = [];
    const slowest: [at: number, ms: number][] = [];
    const started = Date.now();
    const until = started + SECONDS * 1000;
    const pending: Promise<void>[] = [];
    for (let i = 0; Date.now() < until; i++) {
      const at = Date.now() - started;
      pending.push(
        probe(port, i % 2 ? '/v2/health/live' : '/v2/health/ready').then((r) => {
          slowest.push([at, r.ms]);
          if (r.ok) latencies.push(r.ms);
          else failures.push(r.error ?? 'not 200');
        }),
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    await Promise.all(pending);
    load.send('stop');
    const loadReport = await report;
    const cpu = cpuSeconds(pid) - cpu0;
    const overflows = listenOverflows() - overflows0;
    console.log(`load average before: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.availableParallelism()} cores`);
    console.log(`overload: c=${C} connections, max_queue_size ${QUEUE}, ${SECONDS} s, health probes every 100 ms on new connections to the ${onHealthPort ? '--health-port listener' : 'HTTP port'}`);
    console.log(`probes: quiet p50 ${pct(quiet, 50).toFixed(1)} ms; under load n=${latencies.length + failures.length}, failed ${failures.length}${failures.length ? ` (${[...new Set(failures)].join(', ')})` : ''}, p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    const worst = slowest.sort((a, b) => b[1] - a[1]).slice(0, 5);
    console.log(`slowest probes (sent at s: ms): ${worst.map(([at, ms]) => `${(at / 1000).toFixed(1)}: ${ms.toFixed(0)}`).join(', ')}`);
    const rate = loadReport.requests / SECONDS;
    console.log(`load: ${loadReport.requests} answers (${rate.toFixed(0)}/s) ${JSON.stringify(loadReport.statuses)}, connection errors ${JSON.stringify(loadReport.errors)}, accept-queue overflows (kernel ListenOverflows) ${overflows}`);
    console.log(`server: ${cpu.toFixed(1)} CPU-s (${((cpu / loadReport.requests) * 1e6).toFixed(0)} µs per answer), peak RSS ${(peakRss(pid) / 2 ** 20).toFixed(0)} MiB`);
  } finally {
    await server.stop();
    rmSync(repo, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'load') await runLoad(Number(process.argv[3]), Number(process.argv[4]));
else await main();
