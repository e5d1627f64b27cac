/**
 * What poison isolation through crashes costs (core's scheduler/crash-retry.ts), through real
 * model.ts workers under thread and process isolation, with the default restart policy: a batch of
 * 8 and of 32 requests formed at once (its preferred size), answered with no poisoned request, and
 * with one request that makes the model exit first or last in the batch. Per case, the median over
 * rounds of: the time until every request of the batch is answered, the time until the poisoned
 * one is, and the main process's CPU (main thread and worker threads; a process-isolated child's
 * own CPU is not in it) per request. A clean and a poisoned batch alternate, so outside load hits
 * both alike.
 *
 * Run: node bench/dist/crash-isolation.bench.js   (BENCH_ROUNDS, default 5)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InferenceServer, silentLogger, type Tensor } from '@tritium/core';
import { pythonLikeBackend } from '@tritium/backend-python-like';

const POISON = 666;
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 5));
const MODEL_TS = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const x = getInputTensorByName(r, 'X')!.data as Int32Array;
      if (x[0] === ${POISON}) process.exit(7);
      return new InferenceResponse({ outputTensors: [new Tensor('Y', Int32Array.from(x), [1, 1])] });
    });
  }
}
`;

const ISOLATIONS = ['thread', 'process'] as const;
const SIZES = [8, 32] as const;
const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-bench-crash-'));
for (const isolation of ISOLATIONS) {
  for (const size of SIZES) {
    const name = `p_${isolation}_${size}`;
    mkdirSync(path.join(repo, name, '1'), { recursive: true });
    writeFileSync(path.join(repo, name, '1', 'model.ts'), MODEL_TS);
    writeFileSync(
      path.join(repo, name, 'config.pbtxt'),
      `name: "${name}"
backend: "python"
max_batch_size: ${size}
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
dynamic_batching { preferred_batch_size: [ ${size} ] max_queue_delay_microseconds: 10000000 }
parameters { key: "tritium.isolation" value: { string_value: "${isolation}" } }
`,
    );
  }
}

const x = (v: number): Tensor => ({ name: 'X', datatype: 'INT32', shape: [1, 1], data: new Uint8Array(Int32Array.of(v).buffer) });
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Sample {
  allMs: number;
  poisonMs: number;
  cpuUsPerRequest: number;
  failed: number;
}

/** Sends one batch of `size` requests at once (the poison at `poisonAt`, if any); waits for every answer. */
async function batch(server: InferenceServer, model: string, size: number, poisonAt: number | undefined): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  let poisonMs = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: size }, (_, i) =>
      server.infer({ id: `r${i}`, model, inputs: [x(i === poisonAt ? POISON : i + 1)] }).then(
        () => undefined,
        () => {
          failed++;
          if (i === poisonAt) poisonMs = performance.now() - start;
        },
      ),
    ),
  );
  const allMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { allMs, poisonMs, cpuUsPerRequest: (used.user + used.system) / size, failed };
}

/** Waits until the model's instance serves again (the poisoned batch's last crash restarts it). */
async function healthy(server: InferenceServer, model: string): Promise<void> {
  for (;;) {
    const instances = server.metrics().find((m) => m.model === model)?.instances ?? [];
    if (instances.every((i) => i.healthy)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

const server = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend()], log: silentLogger });
await server.start();
try {
  console.log(`crash isolation: median of ${ROUNDS} rounds (ms until answered; main-process CPU µs per request)`);
  console.log('isolation  batch  case            all answered  poisoned answered  CPU/request  failed');
  for (const isolation of ISOLATIONS) {
    for (const size of SIZES) {
      const model = `p_${isolation}_${size}`;
      await batch(server, model, size, undefined); // warm-up
      const cases = { clean: undefined, 'poison first': 0, 'poison last': size - 1 } as const;
      const samples = new Map<string, Sample[]>(Object.keys(cases).map((k) => [k, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const [label, at] of Object.entries(cases)) {
          samples.get(label)!.push(await batch(server, model, size, at));
          await healthy(server, model);
        }
      }
      for (const [label, s] of samples) {
        const row = [
          isolation.padEnd(9),
          String(size).padStart(5),
          label.padEnd(14),
          median(s.map((v) => v.allMs)).toFixed(1).padStart(13),
          (label === 'clean' ? '-' : median(s.map((v) => v.poisonMs)).toFixed(1)).padStart(18),
          median(s.map((v) => v.cpuUsPerRequest)).toFixed(0).padStart(12),
          String(median(s.map((v) => v.failed))).padStart(7),
        ];
        console.log(row.join('  '));
      }
    }
  }
} finally {
  await server.stop();
  rmSync(repo, { recursive: true, force: true });
}
