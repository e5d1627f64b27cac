/**
 * A BERT-shaped ONNX model (vocab 30522, hidden 128, 2 layers, 2 heads, sequence 16) at batch 32:
 * (A) served through the dynamic batcher (core's createScheduler + this backend's instance, one
 * instance, batch-1 requests from many concurrent clients), against (B) the same model and session
 * options run in a tight loop at batch 32 inside one worker. Short rounds alternate B/A; prints
 * rows/s per round, the ratio of the totals and the median ratio (target ≥ 0.9).
 *
 * Run: node bench/dist/onnx.bench.js [--seconds=1.5] [--rounds=8] [--concurrency=96] [--instances=1] [--intra=N] [--spin=0|1]
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir, availableParallelism } from 'node:os';
import path from 'node:path';
import { silentLogger, tensorFromTyped, typedView, type InferRequest, type Tensor } from '@tritium/core';
import { type ModelInstance } from '@tritium/core/backend';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { createScheduler } from '@tritium/core/scheduler';
import { spawnWorkerInstance } from '@tritium/core/worker';
import { modelSessionOptions, onnxBackend } from '@tritium/backend-onnx';
import { buildBertModel } from '@tritium/onnx-gen';
import type { TightLoopInit } from './onnx-tight-loop.entry.ts';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const SECONDS = arg('seconds', 1.5);
const ROUNDS = arg('rounds', 8);
const CONCURRENCY = arg('concurrency', 96);
/** Instances behind the batcher (each gets cores ÷ instances intra-op threads); the tight loop is always one session. */
const INSTANCES = arg('instances', 1);
/** intra_op_thread_count of each served instance (default: cores ÷ instances). */
const INTRA = process.argv.find((a) => a.startsWith('--intra='))?.split('=')[1];
/** ORT's intra-op spinning (session.intra_op.allow_spinning), for both paths; default: the backend's (off). */
const SPIN = process.argv.find((a) => a.startsWith('--spin='))?.split('=')[1];
const VOCAB = 30522;
const SEQ = 16;
const BATCH = 32;

const root = mkdtempSync(path.join(tmpdir(), 'tritium-onnx-bench-'));
const modelDir = path.join(root, 'bert');
const versionDir = path.join(modelDir, '1');
mkdirSync(versionDir, { recursive: true });
const t0 = performance.now();
const bytes = buildBertModel({
  vocabSize: VOCAB,
  hidden: 128,
  layers: 2,
  heads: 2,
  maxPosition: 64,
  seed: 11,
  names: { inputIds: 'INPUT_IDS', attentionMask: 'ATTENTION_MASK', logits: 'LOGITS' },
});
writeFileSync(path.join(versionDir, 'model.onnx'), bytes);
console.log(`generated BERT-shaped model: ${(bytes.byteLength / 1e6).toFixed(1)} MB in ${(performance.now() - t0).toFixed(0)} ms; ${availableParallelism()} cores`);

// (A) the served path: backend instance in its worker behind the dynamic batcher.
const configText = `
max_batch_size: ${BATCH}
input [
  { name: "INPUT_IDS", data_type: TYPE_INT64, dims: [${SEQ}] },
  { name: "ATTENTION_MASK", data_type: TYPE_INT64, dims: [${SEQ}] }
]
output [{ name: "LOGITS", data_type: TYPE_FP32, dims: [2] }]
dynamic_batching { preferred_batch_size: [${BATCH}], max_queue_delay_microseconds: 5000 }
${SPIN === undefined ? '' : `parameters { key: "session.intra_op.allow_spinning" value { string_value: "${SPIN}" } }`}
${INTRA === undefined ? '' : `parameters { key: "intra_op_thread_count" value { string_value: "${INTRA}" } }`}
instance_group [{ kind: KIND_CPU, count: ${INSTANCES} }]
`;
const config = normalizeModelConfig({ ...parseModelConfigText(configText), name: 'bert', backend: 'onnxruntime' }, { modelName: 'bert' });
const backend = onnxBackend();
const model = await backend.loadModel({ config, version: 1, modelDir, versionDir, log: silentLogger });
const instances = await Promise.all(
  Array.from({ length: INSTANCES }, (_, i) => model.createInstance({ name: `bert_0_${i}`, kind: 'CPU', device: 0, groupName: 'bert' })),
);
// Busy time of the instances (between execute call and return): tells batcher gaps from hand-off costs.
let busyMs = 0;
let executes = 0;
let executedRows = 0;
let inferNs = 0;
let prepNs = 0;
const timed: ModelInstance[] = instances.map((instance) => ({
  execute: async (batch, signal) => {
    const start = performance.now();
    executes++;
    executedRows += batch.length;
    try {
      const output = await instance.execute(batch, signal);
      inferNs += output.timings?.computeInferNs ?? 0;
      prepNs += (output.timings?.computeInputNs ?? 0) + (output.timings?.computeOutputNs ?? 0);
      return output;
    } finally {
      busyMs += performance.now() - start;
    }
  },
  dispose: () => instance.dispose(),
}));
const scheduler = createScheduler(config, {
  modelName: 'bert',
  version: 1,
  instances: timed,
  infer: () => Promise.reject(new Error('no nested inference in this bench')),
  log: silentLogger,
});

let nextId = 0;
function oneRow(): InferRequest {
  const ids = BigInt64Array.from({ length: SEQ }, (_, i) => BigInt(((nextId * 31 + i) * 7919) % VOCAB));
  return {
    id: String(nextId++),
    model: 'bert',
    inputs: [tensorFromTyped('INPUT_IDS', 'INT64', [1, SEQ], ids), tensorFromTyped('ATTENTION_MASK', 'INT64', [1, SEQ], new BigInt64Array(SEQ).fill(1n))],
  };
}

async function served(seconds: number): Promise<{ rowsPerS: number; busy: number; meanBatch: number; mainThread: number; inferMs: number; prepMs: number; executeMs: number }> {
  busyMs = 0;
  executes = 0;
  executedRows = 0;
  inferNs = 0;
  prepNs = 0;
  const deadline = performance.now() + seconds * 1000;
  const elu = performance.eventLoopUtilization();
  let rows = 0;
  const start = performance.now();
  const client = async () => {
    while (performance.now() < deadline) {
      await scheduler.enqueue(oneRow());
      rows++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const wallMs = performance.now() - start;
  const mainThread = performance.eventLoopUtilization(elu).utilization;
  const n = Math.max(1, executes);
  return { rowsPerS: rows / (wallMs / 1000), busy: busyMs / wallMs / INSTANCES, meanBatch: executedRows / n, mainThread, inferMs: inferNs / 1e6 / n, prepMs: prepNs / 1e6 / n, executeMs: busyMs / n };
}

// (B) the baseline: same session options, batch 32 in a tight loop inside one worker.
// One session in one worker: the options a single-instance config gets (all cores).
const { session: sessionOptions } = modelSessionOptions({ ...config, instance_group: [{ ...config.instance_group[0]!, count: 1 }] });
const tight = await spawnWorkerInstance<TightLoopInit>({
  entry: new URL('./onnx-tight-loop.entry.ts', import.meta.url),
  init: { modelPath: path.join(versionDir, 'model.onnx'), session: { ...sessionOptions, executionProviders: ['cpu'] }, batch: BATCH, sequence: SEQ, vocabSize: VOCAB },
  model: 'tight',
  instanceName: 'tight_0',
});
async function tightLoop(seconds: number): Promise<{ rowsPerS: number; runMs: number }> {
  const [result] = (await tight.execute([{ id: 't', model: 'tight', inputs: [], parameters: { duration_ms: seconds * 1000 } }], new AbortController().signal)).results;
  const [runs, ms] = typedView((result as { outputs: readonly Tensor[] }).outputs[0]!) as Float64Array;
  return { rowsPerS: (runs! * BATCH) / (ms! / 1000), runMs: ms! / runs! };
}

// Warm-up both paths.
await tightLoop(1);
await served(1);

// Short alternating slices, so load from other processes on the machine hits both paths alike.
const table: string[][] = [['round', 'tight loop rows/s (batch 32, 1 worker)', 'served via batcher rows/s', 'instance busy', 'mean batch', 'main thread busy', 'ORT run ms tight/served', 'served execute ms (in-worker prep)', 'ratio served/tight']];
const ratios: number[] = [];
let tightTotal = 0;
let servedTotal = 0;
for (let r = 1; r <= ROUNDS; r++) {
  const { rowsPerS: b, runMs } = await tightLoop(SECONDS);
  const { rowsPerS: a, busy, meanBatch, mainThread, inferMs, prepMs, executeMs } = await served(SECONDS);
  tightTotal += b;
  servedTotal += a;
  ratios.push(a / b);
  table.push([String(r), b.toFixed(0), a.toFixed(0), `${(busy * 100).toFixed(1)}%`, meanBatch.toFixed(1), `${(mainThread * 100).toFixed(1)}%`, `${runMs.toFixed(1)} / ${inferMs.toFixed(1)}`, `${executeMs.toFixed(1)} (${prepMs.toFixed(2)})`, (a / b).toFixed(3)]);
}
const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!;
const overall = servedTotal / tightTotal;
table.push(['all', (tightTotal / ROUNDS).toFixed(0), (servedTotal / ROUNDS).toFixed(0), '', '', '', '', '', overall.toFixed(3)]);
table.push(['median', '', '', '', '', '', '', '', median.toFixed(3)]);
const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
for (const row of table) console.log(row.map((cell, c) => cell.padStart(widths[c]!)).join('  '));
console.log(
  `tight loop: 1 session, ${sessionOptions.intraOpNumThreads} intra-op threads; served: ${INSTANCES} instance(s), ${modelSessionOptions(config).session.intraOpNumThreads} each; ${CONCURRENCY} concurrent batch-1 clients; ${ROUNDS} rounds of ${SECONDS}s each path; target ratio ≥ 0.9: ${overall >= 0.9 ? 'met' : 'NOT met'}`,
);

await scheduler.stop();
await Promise.all(instances.map((i) => i.dispose()));
await tight.dispose();
await model.dispose();
rmSync(root, { recursive: true, force: true });
