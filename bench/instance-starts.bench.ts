/**
 * What loading a model of many instances costs a neighbour: `tritium serve` serves a small ONNX
 * model (add/sub) to one closed-loop HTTP client while a model.ts of N process-isolated instances
 * (a sandboxed child each) is loaded through the load API. Run with --model-load-thread-count=N
 * (every instance starts at once, as before the bound) and with the default 4, side by side;
 * prints the neighbour's p50 / p99 / max latency while the load runs, the load's duration and the
 * server's CPU (all its processes) during it.
 *
 * Run: node bench/dist/instance-starts.bench.js [--instances=128] [--rounds=1] [--bounded=4]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTritium } from '@tritium/example-setup';
import { buildAddSubModel } from '@tritium/onnx-gen';
import { treeCpuSeconds } from './pipeline/cpu.ts';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const INSTANCES = arg('instances', 128);
const ROUNDS = arg('rounds', 1);
const BOUNDED = arg('bounded', 4);

const repo = mkdtempSync(path.join(tmpdir(), 'tritium-instance-starts-'));
mkdirSync(path.join(repo, 'neighbour', '1'), { recursive: true });
writeFileSync(path.join(repo, 'neighbour', '1', 'model.onnx'), buildAddSubModel({ dtype: 'FP32' }));
writeFileSync(path.join(repo, 'neighbour', 'config.pbtxt'), 'backend: "onnxruntime"\nmax_batch_size: 8\ninstance_group [ { kind: KIND_CPU count: 1 } ]\n');
mkdirSync(path.join(repo, 'many', '1'), { recursive: true });
writeFileSync(
  path.join(repo, 'many', 'config.pbtxt'),
  `backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: ${INSTANCES} } ]
parameters { key: "tritium.isolation" value { string_value: "process" } }
`,
);
writeFileSync(
  path.join(repo, 'many', '1', 'model.ts'),
  `import { InferenceResponse, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse({ outputTensors: [r.inputs()[0]!] }));
  }
}
`,
);

const body = JSON.stringify({
  inputs: [
    { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: 'INPUT1', datatype: 'FP32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
});

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function once(threadCount: number): Promise<string[]> {
  const serve = await startTritium(repo, { args: ['--model-control-mode=explicit', '--load-model=neighbour', `--model-load-thread-count=${threadCount}`, '--exit-timeout-secs=60'] });
  try {
    const base = `http://${serve.httpUrl}`;
    const url = `${base}/v2/models/neighbour/infer`;
    const ask = async (): Promise<number> => {
      const t = performance.now();
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.text();
      if (res.status !== 200) throw new Error(`neighbour answered ${res.status}`);
      return performance.now() - t;
    };
    for (let i = 0; i < 50; i++) await ask(); // warm-up
    let loading = true;
    const latencies: number[] = [];
    const client = (async () => {
      while (loading) latencies.push(await ask());
    })();
    const cpu0 = treeCpuSeconds(serve.process.pid!);
    const t0 = performance.now();
    const load = await fetch(`${base}/v2/repository/models/many/load`, { method: 'POST' });
    const loadS = (performance.now() - t0) / 1000;
    const cpuS = treeCpuSeconds(serve.process.pid!) - cpu0;
    loading = false;
    await client;
    if (load.status !== 200) throw new Error(`load answered ${load.status}: ${await load.text()}`);
    const sorted = [...latencies].sort((a, b) => a - b);
    return [
      String(threadCount),
      loadS.toFixed(1),
      cpuS.toFixed(1),
      String(latencies.length),
      quantile(sorted, 0.5).toFixed(1),
      quantile(sorted, 0.99).toFixed(1),
      sorted.at(-1)!.toFixed(1),
    ];
  } finally {
    await serve.stop(120_000);
  }
}

const table: string[][] = [['--model-load-thread-count', 'load s', 'server CPU s (all processes)', 'neighbour requests', 'p50 ms', 'p99 ms', 'max ms']];
for (let r = 0; r < ROUNDS; r++) {
  for (const count of r % 2 === 0 ? [INSTANCES, BOUNDED] : [BOUNDED, INSTANCES]) table.push(await once(count));
}
const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
for (const row of table) console.log(row.map((cell, c) => cell.padStart(widths[c]!)).join('  '));
console.log(`a model.ts of ${INSTANCES} process-isolated instances loads while one client asks an ONNX add/sub model (HTTP, closed loop)`);
rmSync(repo, { recursive: true, force: true });
