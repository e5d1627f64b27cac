/**
 * Large JSON bodies beside a steady client. `tritium serve` runs as its own
 * process with a model.ts that sums its input; this process keeps one steady client (a small binary infer every
 * 20 ms, one at a time) and, meanwhile, sends rounds of 3 concurrent maximum-size JSON infer bodies
 * (just under `--http-max-json-size`, 16 MiB by default): flat numbers, then one-element arrays
 * (the shape that costs JSON.parse most), after a baseline with no flood (the machine's own noise).
 * Reported: the steady client's losses and latency
 * (p50/p99/max), each flood request's status and time, the server's peak RSS (VmHWM) and its
 * CPU-seconds.
 *
 *     npx tsc -b && node bench/dist/json-flood.bench.js
 *
 * Env: FLOOD_ROUNDS (rounds per body shape, default 3), FLOOD_JSON_BYTES (default 16 MiB - 4 KiB).
 */
import http from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTritium } from '@tritium/example-setup';

const ROUNDS = Number(process.env['FLOOD_ROUNDS'] ?? 3);
const JSON_BYTES = Number(process.env['FLOOD_JSON_BYTES'] ?? 16 * 1024 * 1024 - 4096);
const STEADY_EVERY_MS = 20;

// Sums its input: the reply stays small, so the bench measures what the JSON body costs.
const SUM = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]): InferenceResponse[] {
    return requests.map((r) => {
      const x = getInputTensorByName(r, 'INPUT0')!.data as Float32Array;
      let sum = 0;
      for (let i = 0; i < x.length; i++) sum += x[i]!;
      return new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', Float32Array.of(sum), [1])] });
    });
  }
}
`;

function repository(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-json-flood-'));
  mkdirSync(path.join(dir, 'sum', '1'), { recursive: true });
  writeFileSync(
    path.join(dir, 'sum', 'config.pbtxt'),
    `backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`,
  );
  writeFileSync(path.join(dir, 'sum', '1', 'model.ts'), SUM);
  return dir;
}

/** A JSON infer body of about `bytes` bytes: flat numbers, or each number in its own array. */
function floodBody(bytes: number, nested: boolean): Buffer {
  const head = '{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[__N__],"data":[';
  const tail = ']}]}';
  const item = nested ? '[0.125],' : '0.125,';
  const n = Math.floor((bytes - head.length - tail.length - 16) / item.length);
  const body = head.replace('__N__', String(n)) + item.repeat(n).slice(0, -1) + tail;
  return Buffer.from(body);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function post(port: number, pathName: string, body: Buffer, headers: Record<string, string | number> = {}): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: pathName, agent, headers: { 'content-length': body.length, ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

function procStatus(pid: number, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (100 Hz)
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

const repo = repository();
const server = await startTritium(repo);
const port = Number(server.httpUrl.split(':')[1]);
const pid = server.process.pid!;
try {
  const small = (() => {
    const data = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer);
    const head = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } }], parameters: { binary_data_output: true } }));
    return { body: Buffer.concat([head, data]), headers: { 'inference-header-content-length': head.length } };
  })();
  for (let i = 0; i < 50; i++) await post(port, '/v2/models/sum/infer', small.body, small.headers);

  console.log(`json-flood: 3 concurrent JSON bodies of ${(JSON_BYTES / 2 ** 20).toFixed(2)} MiB, ${ROUNDS} round(s) per shape, steady client every ${STEADY_EVERY_MS} ms`);
  console.log('shape   | flood statuses       | flood s (max) | steady n | lost | p50 ms | p99 ms | max ms | server peak RSS | server CPU s');
  for (const shape of ['none', 'flat', 'nested'] as const) {
    const body = shape === 'none' ? undefined : floodBody(JSON_BYTES, shape === 'nested');
    const cpu0 = cpuSeconds(pid);
    const latencies: number[] = [];
    let lost = 0;
    let steadyOn = true;
    const steady = (async () => {
      while (steadyOn) {
        const r = await post(port, '/v2/models/sum/infer', small.body, small.headers);
        if (r.status === 200) latencies.push(r.ms);
        else lost++;
        await new Promise((res) => setTimeout(res, STEADY_EVERY_MS));
      }
    })();
    const statuses: number[] = [];
    let slowest = 0;
    if (!body) await new Promise((res) => setTimeout(res, 4000)); // the steady client alone: the machine's own noise
    for (let round = 0; body && round < ROUNDS; round++) {
      const results = await Promise.all([0, 1, 2].map(() => post(port, '/v2/models/sum/infer', body, { 'content-type': 'application/json' })));
      for (const r of results) {
        statuses.push(r.status);
        slowest = Math.max(slowest, r.ms);
      }
    }
    await new Promise((res) => setTimeout(res, 200));
    steadyOn = false;
    await steady;
    const counts = [...new Set(statuses)].map((st) => `${st}x${statuses.filter((x) => x === st).length}`).join(' ');
    console.log(
      [
        shape.padEnd(7),
        (counts || '-').padEnd(20),
        (slowest / 1000).toFixed(2).padStart(13),
        String(latencies.length + lost).padStart(8),
        String(lost).padStart(4),
        pct(latencies, 50).toFixed(1).padStart(6),
        pct(latencies, 99).toFixed(1).padStart(6),
        Math.max(...latencies).toFixed(1).padStart(6),
        `${(procStatus(pid, 'VmHWM') / 2 ** 20).toFixed(0)} MiB`.padStart(15),
        (cpuSeconds(pid) - cpu0).toFixed(1).padStart(12),
      ].join(' | '),
    );
  }
} finally {
  agent.destroy();
  await server.stop();
  rmSync(repo, { recursive: true, force: true });
}
