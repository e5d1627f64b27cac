/**
 * Scheduler overhead benchmark: dynamic batcher + instance round trip per request at batch 1 and
 * batch 32 (in-thread identity instance, and the real worker-thread identity backend from
 * @tritium/core/testing), and an ensemble of three identity steps against one step.
 *
 *     node bench/dist/scheduler.bench.js
 */
import { silentLogger, tensorFromTyped } from '@tritium/core';
import { DynamicBatcher, batcherOptionsFromConfig, createScheduler, nullStatsRecorder } from '@tritium/core/scheduler';
import type { EnsembleStep, InferRequest, InferResponse, ModelConfig } from '@tritium/core';
import type { ModelInstance } from '@tritium/core/backend';
import type { Scheduler, StatsRecorder } from '@tritium/core/scheduler';
import { identityBackend } from '@tritium/core/testing';

function cfg(name: string, maxBatch: number, dynamic: boolean, extra: Partial<ModelConfig> = {}): ModelConfig {
  const t = { data_type: 'TYPE_FP32' as const, dims: [4], is_shape_tensor: false, is_non_linear_format_io: false };
  return {
    name,
    platform: '',
    backend: 'identity',
    runtime: '',
    max_batch_size: maxBatch,
    input: [{ ...t, name: 'INPUT0', format: 'FORMAT_NONE', allow_ragged_batch: false, optional: false }],
    output: [{ ...t, name: 'OUTPUT0', label_filename: '' }],
    batch_input: [],
    batch_output: [],
    instance_group: [],
    default_model_filename: '',
    cc_model_filenames: {},
    metric_tags: {},
    parameters: {},
    model_warmup: [],
    ...(dynamic
      ? {
          dynamic_batching: {
            preferred_batch_size: [],
            max_queue_delay_microseconds: 0,
            preserve_ordering: false,
            priority_levels: 0,
            default_priority_level: 0,
            priority_queue_policy: {},
          },
        }
      : {}),
    ...extra,
  };
}

const inThreadIdentity: ModelInstance = {
  execute: (batch) =>
    Promise.resolve({ results: batch.map((r) => ({ id: r.id, model: r.model, version: 1, outputs: r.inputs.map((t) => ({ ...t, name: 'OUTPUT0' })) })) }),
  dispose: () => Promise.resolve(),
};

const tensor = tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]));
/** Requests share one input tensor so the numbers measure scheduling, not allocation. */
function request(model: string, i: number): InferRequest {
  return { id: String(i), model, inputs: [tensor] };
}

/**
 * Closed loop: `concurrency` callers each send the next request when their previous one is
 * answered. Best of 3 rounds (the machine is shared), in µs per request.
 */
async function closedLoop(concurrency: number, total: number, send: (i: number) => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) await send(next++);
      }),
    );
    best = Math.min(best, ((performance.now() - start) * 1000) / total);
  }
  return best;
}

function batchCounter(): StatsRecorder & { mean(): number } {
  let execs = 0;
  let items = 0;
  return {
    ...nullStatsRecorder,
    execution: (n) => {
      execs++;
      items += n;
    },
    mean: () => (execs ? items / execs : 0),
  };
}

interface Row {
  case: string;
  concurrency: number;
  usPerRequest: number;
  meanBatch: string;
}
const rows: Row[] = [];

async function batcherCase(label: string, instance: ModelInstance, concurrency: number, total: number): Promise<number> {
  const stats = batchCounter();
  const s = new DynamicBatcher(batcherOptionsFromConfig(cfg('m', 32, true), 1), { instances: [instance], stats });
  await closedLoop(concurrency, Math.min(total, 5000), (i) => s.enqueue(request('m', i))); // warm-up
  const fresh = batchCounter();
  const s2 = new DynamicBatcher(batcherOptionsFromConfig(cfg('m', 32, true), 1), { instances: [instance], stats: fresh });
  const us = await closedLoop(concurrency, total, (i) => s2.enqueue(request('m', i)));
  rows.push({ case: `${label} via batcher`, concurrency, usPerRequest: us, meanBatch: fresh.mean().toFixed(1) });
  await s.stop();
  await s2.stop();
  return us;
}

async function directCase(label: string, instance: ModelInstance, concurrency: number, total: number): Promise<number> {
  const signal = new AbortController().signal;
  await closedLoop(1, Math.min(total, 5000), (i) => instance.execute([request('m', i)], signal));
  // Baseline without a scheduler: each caller's request executed alone, one call in flight.
  let chain: Promise<unknown> = Promise.resolve();
  const us = await closedLoop(concurrency, total, (i) => (chain = chain.then(() => instance.execute([request('m', i)], signal))));
  rows.push({ case: `${label} direct execute`, concurrency, usPerRequest: us, meanBatch: '1.0' });
  return us;
}

async function ensembleCase(steps: number, total: number, instanceFor: (k: number) => ModelInstance = () => inThreadIdentity, label = 'in-thread'): Promise<number> {
  const schedulers = new Map<string, Scheduler>();
  const configs = new Map<string, ModelConfig>();
  const infer = (r: InferRequest): Promise<InferResponse> => schedulers.get(r.model)!.enqueue(r);
  const stepList: EnsembleStep[] = [];
  for (let k = 0; k < steps; k++) {
    const c = cfg(`id${k}`, 32, true);
    configs.set(c.name, c);
    schedulers.set(c.name, createScheduler(c, { modelName: c.name, version: 1, instances: [instanceFor(k)], infer }));
    stepList.push({
      model_name: c.name,
      model_version: -1,
      input_map: { INPUT0: k === 0 ? 'INPUT0' : `t${k}` },
      output_map: { OUTPUT0: k === steps - 1 ? 'OUTPUT0' : `t${k + 1}` },
      model_namespace: '',
    });
  }
  const e = cfg('E', 32, false, { platform: 'ensemble', backend: '', ensemble_scheduling: { step: stepList, max_inflight_requests: 0 } });
  const scheduler = createScheduler(e, { modelName: 'E', version: 1, instances: [], infer, getModelConfig: (n) => configs.get(n) });
  await closedLoop(1, 5000, (i) => scheduler.enqueue(request('E', i)));
  const us = await closedLoop(1, total, (i) => scheduler.enqueue(request('E', i)));
  rows.push({ case: `ensemble of ${steps} ${label} identity step(s)`, concurrency: 1, usPerRequest: us, meanBatch: '1.0' });
  return us;
}

const N = Number(process.env.BENCH_N ?? 20000);
const b1 = await batcherCase('in-thread identity', inThreadIdentity, 1, N);
const d1 = await directCase('in-thread identity', inThreadIdentity, 1, N);
const b32 = await batcherCase('in-thread identity', inThreadIdentity, 32, N * 4);
const d32 = await directCase('in-thread identity', inThreadIdentity, 32, N * 4);

const backend = identityBackend();
const model = await backend.loadModel({ config: cfg('m', 32, true), version: 1, modelDir: '/nonexistent', versionDir: '/nonexistent/1', log: silentLogger });
const worker = await model.createInstance({ name: 'm_0_0', kind: 'CPU', device: 0, groupName: 'm' });
const wb1 = await batcherCase('worker identity', worker, 1, N / 4);
const wd1 = await directCase('worker identity', worker, 1, N / 4);
const wb32 = await batcherCase('worker identity', worker, 32, N);
const wd32 = await directCase('worker identity', worker, 32, N);
const workers = [worker];
for (let k = 1; k < 3; k++) workers.push(await model.createInstance({ name: `m_0_${k}`, kind: 'CPU', device: 0, groupName: 'm' }));

const e1 = await ensembleCase(1, N / 2);
const e3 = await ensembleCase(3, N / 2);
const we1 = await ensembleCase(1, N / 8, (k) => workers[k]!, 'worker');
const we3 = await ensembleCase(3, N / 8, (k) => workers[k]!, 'worker');
await Promise.all(workers.map((w) => w.dispose()));
await model.dispose();

console.table(rows.map((r) => ({ ...r, usPerRequest: r.usPerRequest.toFixed(2) })));
const line = (k: string, v: string) => console.log(`${k.padEnd(58)} ${v}`);
line('batcher overhead per request, in-thread, batch 1 (µs)', (b1 - d1).toFixed(2));
line('batcher / direct, in-thread, batch 1', (b1 / d1).toFixed(2));
line('batcher overhead per request, in-thread, conc 32 (µs)', (b32 - d32).toFixed(2));
line('batcher / direct, in-thread, conc 32', (b32 / d32).toFixed(2));
line('batcher overhead per request, worker, batch 1 (µs)', (wb1 - wd1).toFixed(2));
line('batcher / direct, worker, batch 1', (wb1 / wd1).toFixed(2));
line('batcher per request, worker, conc 32 (µs)', wb32.toFixed(2));
line('worker: batched conc 32 / direct unbatched conc 32', (wb32 / wd32).toFixed(2));
line('ensemble 3 steps / 1 step', (e3 / e1).toFixed(2));
line('ensemble per extra step, in-thread (µs, target < 50)', ((e3 - e1) / 2).toFixed(2));
line('ensemble 3 / 1 worker steps', (we3 / we1).toFixed(2));
line('ensemble per extra worker step (µs, incl. worker hop)', ((we3 - we1) / 2).toFixed(2));
line('  of which scheduling (extra step minus direct worker call)', ((we3 - we1) / 2 - wd1).toFixed(2));
