/**
 * Both batchers answer through one module (scheduler/batch-answers.ts), so a request they answer
 * leaves the same record: the statistics calls (queued, dequeued, execution, success or failure,
 * per-response, first response), the compute durations handed to an ensemble's sum, and the
 * trace activities (QUEUE_START, COMPUTE_*). The same request runs through the dynamic batcher and
 * the sequence batcher with the same manual clock steps and execute timings; their records must be
 * equal, for a model that answers once and for a decoupled one.
 */
import { describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped } from '../../src/index.ts';
import { normalizeModelConfig, parseModelConfigText } from '../../src/config/index.ts';
import { createScheduler } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { ComputeDurations, InferRequest, InferResponse, ModelConfig, ResponseSink } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { StatsRecorder } from '../../src/scheduler/index.ts';
import type { RequestTrace } from '../../src/trace/index.ts';
import { flush, manualInstance } from './helpers.ts';

const TIMINGS = { computeInputNs: 1000, computeInferNs: 2000, computeOutputNs: 3000 };

function modelConfig(kind: 'dynamic' | 'sequence', decoupled: boolean): ModelConfig {
  const text = `name: "m"
backend: "fake"
max_batch_size: 0
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
${kind === 'dynamic' ? 'dynamic_batching { }' : 'sequence_batching { }'}
${decoupled ? 'model_transaction_policy { decoupled: true }' : ''}`;
  return normalizeModelConfig(parseModelConfigText(text), { modelName: 'm' });
}

/** Every call a scheduler makes on its statistics, trace and compute sink, in order. */
function recorder(): { log: string[]; stats: StatsRecorder; trace: RequestTrace; computeSink: { add(d: ComputeDurations): void } } {
  const log: string[] = [];
  const stats: StatsRecorder = {
    requestQueued: () => log.push('queued'),
    requestDequeued: (queueNs) => log.push(`dequeued ${queueNs}`),
    execution: (batchSize, t) => log.push(`execution ${batchSize} ${JSON.stringify(t)}`),
    requestSucceeded: (totalNs, d) => log.push(`succeeded ${totalNs} ${d.queueNs} ${d.computeInputNs} ${d.computeInferNs} ${d.computeOutputNs}`),
    requestFailed: (totalNs, reason, dequeued) => log.push(`failed ${totalNs} ${reason} ${dequeued}`),
    response: (index, outcome, d) => log.push(`response ${index} ${outcome} ${d.inferNs} ${d.outputNs}`),
    firstResponse: (ns) => log.push(`first response ${ns}`),
  };
  const trace: RequestTrace = {
    setModel: () => undefined,
    report: (activity, ns) => log.push(`trace ${activity} ${ns}`),
    tensors: false,
    reportTensor: () => undefined,
    spawnChild: () => trace,
    linkBatch: () => undefined,
    release: () => undefined,
  };
  return { log, stats, trace, computeSink: { add: (d) => log.push(`compute sum ${JSON.stringify(d)}`) } };
}

function request(kind: 'dynamic' | 'sequence', rec: ReturnType<typeof recorder>): InferRequest {
  return {
    id: 'r1',
    model: 'm',
    inputs: [tensorFromTyped('INPUT', 'INT32', [1], Int32Array.of(7))],
    trace: rec.trace,
    computeSink: rec.computeSink,
    ...(kind === 'sequence' ? { sequence: { id: 1, start: true, end: true } } : {}),
  };
}

const response: InferResponse = { id: 'r1', model: 'm', version: 1, outputs: [tensorFromTyped('OUTPUT', 'INT32', [1], Int32Array.of(7))] };

/** One request answered once, 10 µs after its arrival, with TIMINGS; then one the model fails. */
async function unaryRecord(kind: 'dynamic' | 'sequence'): Promise<string[]> {
  const rec = recorder();
  const clock = manualClock();
  const inst = manualInstance();
  const s = createScheduler(modelConfig(kind, false), { modelName: 'm', version: 1, instances: [inst], clock, stats: rec.stats, infer: () => Promise.reject(new Error('unused')) });
  const ok = s.enqueue(request(kind, rec));
  await flush();
  clock.advance(10);
  inst.calls[0]!.resolve([response], TIMINGS);
  await ok;
  const failed = s.enqueue(request(kind, rec));
  await flush();
  clock.advance(4);
  inst.calls[1]!.resolve([new InferError('INVALID_ARG', 'bad row')]);
  await expect(failed).rejects.toThrow('bad row');
  await s.stop();
  return rec.log;
}

/** One request of a decoupled model: two responses 5 and 6 µs apart, then the end of its stream. */
async function decoupledRecord(kind: 'dynamic' | 'sequence'): Promise<string[]> {
  const rec = recorder();
  const clock = manualClock();
  const sinks: ResponseSink[] = [];
  let finish: (() => void) | undefined;
  const inst: ModelInstance = {
    execute: () => Promise.reject(new Error('decoupled only')),
    executeDecoupled: (_batch, batchSinks) => {
      sinks.push(...batchSinks);
      return new Promise((resolve) => (finish = () => resolve(TIMINGS)));
    },
    dispose: () => Promise.resolve(),
  };
  const s = createScheduler(modelConfig(kind, true), { modelName: 'm', version: 1, instances: [inst], clock, stats: rec.stats, infer: () => Promise.reject(new Error('unused')) });
  const got: InferResponse[] = [];
  const done = new Promise<InferError | undefined>((resolve) => s.enqueueStream!(request(kind, rec), { response: (r) => void got.push(r), complete: resolve }));
  await flush();
  clock.advance(5);
  sinks[0]!.response(response);
  clock.advance(6);
  sinks[0]!.response(response);
  sinks[0]!.complete();
  finish!();
  expect(await done).toBeUndefined();
  expect(got).toHaveLength(2);
  await s.stop();
  return rec.log;
}

describe('answering a request: one record for both batchers', () => {
  it('a model answering once: queue, execution, success or failure, first response, compute sum and trace alike', async () => {
    const dynamic = await unaryRecord('dynamic');
    expect(dynamic).toContain('first response 10000');
    expect(dynamic).toContain(`compute sum ${JSON.stringify(TIMINGS)}`);
    expect(dynamic.filter((l) => l.startsWith('trace QUEUE_START'))).toHaveLength(2);
    expect(await unaryRecord('sequence')).toEqual(dynamic);
  });

  it('a decoupled model: each response, the first response and the compute sum alike', async () => {
    const dynamic = await decoupledRecord('dynamic');
    expect(dynamic).toContain('first response 5000');
    expect(await decoupledRecord('sequence')).toEqual(dynamic);
  });
});
