/**
 * What process isolation costs an ONNX model: the example's bert_classifier (model_repository, run
 * `node tools/example-setup/dist/main.js` first) served through core's dynamic batcher by one
 * instance with `tritium.isolation: thread` (A, the default for an operator's model) and with
 * `tritium.isolation: process` (B, a sandboxed child process: what an uploaded model gets). Batch-1
 * requests of 16 tokens from N concurrent clients; short rounds alternate A and B so the machine's
 * other load hits both alike. Prints, per concurrency, rows/s and CPU ms per inference of every
 * process involved (this one with its threads, plus the child and its sandbox wrappers), and B/A.
 *
 * Run: node bench/dist/onnx-isolation.bench.js [--seconds=2] [--rounds=4] [--concurrency=1,16]
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger, tensorFromTyped, type InferRequest } from '@tritium/core';
import { type ModelInstance } from '@tritium/core/backend';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { createScheduler, type Scheduler } from '@tritium/core/scheduler';
import { onnxBackend } from '@tritium/backend-onnx';
import { treeCpuSeconds } from './pipeline/cpu.ts';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const SECONDS = Number(arg('seconds', '2'));
const ROUNDS = Number(arg('rounds', '4'));
const LEVELS = arg('concurrency', '1,16').split(',').map(Number);
const SEQ = 16;
const VOCAB = 30522;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const modelDir = path.join(ROOT, 'model_repository', 'bert_classifier');
const versionDir = path.join(modelDir, '1');
if (!existsSync(path.join(versionDir, 'model.onnx'))) {
  console.error('bench: model_repository/bert_classifier/1/model.onnx is missing: run `node tools/example-setup/dist/main.js` first');
  process.exit(2);
}

type Isolation = 'thread' | 'process';
interface Served {
  readonly scheduler: Scheduler;
  readonly instance: ModelInstance;
}

async function serve(isolation: Isolation): Promise<Served> {
  const text = `
max_batch_size: 64
input [ { name: "INPUT_IDS", data_type: TYPE_INT64, dims: [ -1 ] }, { name: "ATTENTION_MASK", data_type: TYPE_INT64, dims: [ -1 ] } ]
output [ { name: "LOGITS", data_type: TYPE_FP32, dims: [ 2 ] } ]
dynamic_batching { max_queue_delay_microseconds: 2000 }
instance_group [ { kind: KIND_CPU, count: 1 } ]
parameters { key: "tritium.isolation" value { string_value: "${isolation}" } }
`;
  const config = normalizeModelConfig({ ...parseModelConfigText(text), name: 'bert', backend: 'onnxruntime' }, { modelName: 'bert' });
  const model = await onnxBackend().loadModel({ config, version: 1, modelDir, versionDir, log: silentLogger });
  const instance = await model.createInstance({ name: `bert_${isolation}`, kind: 'CPU', device: 0, groupName: 'bert' });
  const scheduler = createScheduler(config, {
    modelName: 'bert',
    version: 1,
    instances: [instance],
    infer: () => Promise.reject(new Error('no nested inference in this bench')),
    log: silentLogger,
  });
  return { scheduler, instance };
}

let nextId = 0;
function oneRow(): InferRequest {
  const ids = BigInt64Array.from({ length: SEQ }, (_, i) => BigInt(((nextId * 31 + i) * 7919) % VOCAB));
  return {
    id: String(nextId++),
    model: 'bert',
    inputs: [tensorFromTyped('INPUT_IDS', 'INT64', [1, SEQ], ids), tensorFromTyped('ATTENTION_MASK', 'INT64', [1, SEQ], new BigInt64Array(SEQ).fill(1n))],
  };
}

async function window(s: Served, concurrency: number, seconds: number): Promise<{ rows: number; wallS: number; cpuS: number }> {
  const deadline = performance.now() + seconds * 1000;
  const cpu0 = treeCpuSeconds();
  const start = performance.now();
  let rows = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await s.scheduler.enqueue(oneRow());
      rows++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return { rows, wallS: (performance.now() - start) / 1000, cpuS: treeCpuSeconds() - cpu0 };
}

const served: Record<Isolation, Served> = { thread: await serve('thread'), process: await serve('process') };
const table: string[][] = [['concurrency', 'thread rows/s', 'process rows/s', 'B/A rows/s', 'thread CPU ms/inf', 'process CPU ms/inf', 'B/A CPU/inf']];
for (const concurrency of LEVELS) {
  const sum: Record<Isolation, { rows: number; wallS: number; cpuS: number }> = {
    thread: { rows: 0, wallS: 0, cpuS: 0 },
    process: { rows: 0, wallS: 0, cpuS: 0 },
  };
  for (const iso of ['thread', 'process'] as const) await window(served[iso], concurrency, 0.5); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const iso of r % 2 === 0 ? (['thread', 'process'] as const) : (['process', 'thread'] as const)) {
      const w = await window(served[iso], concurrency, SECONDS);
      sum[iso].rows += w.rows;
      sum[iso].wallS += w.wallS;
      sum[iso].cpuS += w.cpuS;
    }
  }
  const rate = (iso: Isolation) => sum[iso].rows / sum[iso].wallS;
  const cpuMs = (iso: Isolation) => (sum[iso].cpuS * 1000) / sum[iso].rows;
  table.push([
    String(concurrency),
    rate('thread').toFixed(0),
    rate('process').toFixed(0),
    (rate('process') / rate('thread')).toFixed(3),
    cpuMs('thread').toFixed(2),
    cpuMs('process').toFixed(2),
    (cpuMs('process') / cpuMs('thread')).toFixed(3),
  ]);
}
const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
for (const row of table) console.log(row.map((cell, c) => cell.padStart(widths[c]!)).join('  '));
console.log(`bert_classifier, batch-1 requests of ${SEQ} tokens, 1 instance; ${ROUNDS} rounds of ${SECONDS} s per isolation and concurrency, alternating; CPU of every process involved`);

for (const s of Object.values(served)) {
  await s.scheduler.stop();
  await s.instance.dispose();
}
