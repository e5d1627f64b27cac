/**
 * Sequence batcher benchmark: sequences per second, and the cost per request against the dynamic
 * batcher on the same instance and load. Clients run closed loops: a sequence client sends its L
 * requests one after another (START on the first, END on the last), then starts a new sequence;
 * the dynamic-batcher baseline runs the same clients sending plain requests. One instance,
 * max_batch_size 8 (8 sequence slots), the in-thread identity instance (scheduling cost alone) and
 * the worker-thread identity backend of @tritium/core/testing (a real worker round trip).
 * Wall µs and CPU µs per request (process.cpuUsage: the main thread and the worker threads of this
 * process); best of 3 rounds. Run after `npm run build`:
 *
 *     node bench/dist/sequence.bench.js            (BENCH_N=requests per round, default 8000)
 */
import { cpus, loadavg } from 'node:os';
import { silentLogger, tensorFromTyped } from '@tritium/core';
import { createScheduler } from '@tritium/core/scheduler';
import type { InferRequest, ModelConfig } from '@tritium/core';
import type { ModelInstance } from '@tritium/core/backend';
import type { Scheduler } from '@tritium/core/scheduler';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { identityBackend } from '@tritium/core/testing';

const SEQUENCE = `sequence_batching {
  control_input [
    { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
    { name: "END" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] },
    { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }
  ]
}`;

function config(scheduling: string): ModelConfig {
  const text = `name: "m"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
${scheduling}`;
  return normalizeModelConfig(parseModelConfigText(text), { modelName: 'm' });
}

const inThread: ModelInstance = {
  execute: (batch) =>
    Promise.resolve({ results: batch.map((r) => ({ id: r.id, model: r.model, version: 1, outputs: [{ ...r.inputs[0]!, name: 'OUTPUT0' }] })) }),
  dispose: () => Promise.resolve(),
};

const tensor = tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]));

interface Result {
  readonly wallUs: number;
  readonly cpuUs: number;
  readonly sequencesPerSec: number;
}

/**
 * `clients` closed loops until `total` requests ran; with `length`, each client runs sequences of
 * that many requests. Best of 3 rounds by wall time.
 */
async function run(scheduler: Scheduler, clients: number, total: number, length: number | undefined): Promise<Result> {
  let best: Result = { wallUs: Infinity, cpuUs: Infinity, sequencesPerSec: 0 };
  let nextId = 1;
  for (let round = 0; round < 3; round++) {
    let sent = 0;
    let sequences = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (sent < total) {
          if (length === undefined) {
            sent++;
            await scheduler.enqueue({ id: String(sent), model: 'm', inputs: [tensor] });
            continue;
          }
          const id = nextId++;
          for (let i = 0; i < length; i++) {
            sent++;
            const request: InferRequest = { id: String(sent), model: 'm', inputs: [tensor], sequence: { id, start: i === 0, end: i === length - 1 } };
            await scheduler.enqueue(request);
          }
          sequences++;
        }
      }),
    );
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const result = { wallUs: (wallMs * 1000) / sent, cpuUs: (cpu.user + cpu.system) / sent, sequencesPerSec: (sequences * 1000) / wallMs };
    if (result.wallUs < best.wallUs) best = result;
  }
  return best;
}

const N = Number(process.env.BENCH_N ?? 8000);
const LENGTH = 10;
const rows: Record<string, string | number>[] = [];

async function compare(label: string, instance: () => Promise<ModelInstance>, clients: number, total: number): Promise<void> {
  const inst = await instance();
  const dynamic = createScheduler(config('dynamic_batching { }'), { modelName: 'm', version: 1, instances: [inst], infer: () => Promise.reject(new Error('unused')) });
  const sequence = createScheduler(config(SEQUENCE), { modelName: 'm', version: 1, instances: [inst], infer: () => Promise.reject(new Error('unused')) });
  await run(dynamic, clients, Math.min(total, 2000), undefined); // warm-up
  await run(sequence, clients, Math.min(total, 2000), LENGTH);
  const d = await run(dynamic, clients, total, undefined);
  const s = await run(sequence, clients, total, LENGTH);
  rows.push({
    case: label,
    clients,
    'dynamic µs/req': d.wallUs.toFixed(1),
    'sequence µs/req': s.wallUs.toFixed(1),
    'overhead µs/req': (s.wallUs - d.wallUs).toFixed(1),
    'dynamic CPU µs/req': d.cpuUs.toFixed(1),
    'sequence CPU µs/req': s.cpuUs.toFixed(1),
    'sequences/s': s.sequencesPerSec.toFixed(0),
  });
  await dynamic.stop();
  await sequence.stop();
  if (inst !== inThread) await inst.dispose();
}

const backend = identityBackend();
const model = await backend.loadModel({ config: config('dynamic_batching { }'), version: 1, modelDir: '/nonexistent', versionDir: '/nonexistent/1', log: silentLogger });
const worker = () => model.createInstance({ name: 'm_0_0', kind: 'CPU', device: 0, groupName: 'm' });

await compare('in-thread identity', async () => inThread, 1, N);
await compare('in-thread identity', async () => inThread, 8, N);
await compare('in-thread identity', async () => inThread, 64, N);
await compare('worker identity', worker, 1, N / 4);
await compare('worker identity', worker, 8, N / 2);
await compare('worker identity', worker, 64, N / 2);
await model.dispose();

console.log(`sequence batcher benchmark: sequences of ${LENGTH} requests, max_batch_size 8 (8 slots), 1 instance; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs`);
console.table(rows);
console.log('clients > 8: sequences beyond the 8 slots wait in the backlog (Triton\'s behaviour), so sequence throughput is bounded by slots, not clients.');
