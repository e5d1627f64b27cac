import { describe, expect, it } from 'vitest';
import { InferError, silentLogger } from '../../src/index.ts';
import { createScheduler, nullStatsRecorder } from '../../src/scheduler/index.ts';
import { SequenceBatcher } from '../../src/scheduler/sequence/sequence-batcher.ts';
import { manualClock } from '../../src/testing/index.ts';
import { identityBackend } from '../../src/testing/index.ts';
import type { InferResponse, ModelConfig, ResponseSink } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { StatsRecorder } from '../../src/scheduler/index.ts';
import { config, dynamicBatching, flush, identity, manualInstance, req, settle, valueOf } from './helpers.ts';

function make(cfg: ModelConfig, instances: ModelInstance[], stats: StatsRecorder = nullStatsRecorder) {
  return createScheduler(cfg, { modelName: cfg.name, version: 1, instances, clock: manualClock(), stats, infer: () => Promise.reject(new Error('unused')) });
}

/** A decoupled instance: sends `n` responses per request (value = input + k), then completes. */
function decoupledInstance(n: number): ModelInstance {
  return {
    execute: () => Promise.reject(new Error('decoupled models use executeDecoupled')),
    async executeDecoupled(batch, sinks) {
      await Promise.resolve();
      batch.forEach((r, i) => {
        for (let k = 0; k < n; k++) sinks[i]!.response(identity([r])[0]!);
        sinks[i]!.complete();
      });
    },
    dispose: () => Promise.resolve(),
  };
}

function collect(): ResponseSink & { responses: InferResponse[]; completed?: InferError | 'ok' } {
  const sink = {
    responses: [] as InferResponse[],
    completed: undefined as InferError | 'ok' | undefined,
    response: (r: InferResponse) => void sink.responses.push(r),
    complete: (e?: InferError) => void (sink.completed = e ?? 'ok'),
  };
  return sink;
}

describe('decoupled models', () => {
  it('streams every response of a decoupled model, then completes', async () => {
    const cfg = config({ model_transaction_policy: { decoupled: true }, dynamic_batching: dynamicBatching() });
    const s = make(cfg, [decoupledInstance(3)]);
    const sink = collect();
    s.enqueueStream!(req(5), sink);
    await flush();
    expect(sink.responses.map(valueOf)).toEqual([5, 5, 5]);
    expect(sink.completed).toBe('ok');
    expect(s.inflight).toBe(0);
  });

  it('a unary call to a decoupled model needs exactly one response', async () => {
    const one = make(config({ model_transaction_policy: { decoupled: true } }), [decoupledInstance(1)]);
    expect(valueOf(await one.enqueue(req(2)))).toBe(2);
    const many = make(config({ model_transaction_policy: { decoupled: true } }), [decoupledInstance(2)]);
    await expect(many.enqueue(req(2))).rejects.toThrow("model 'm' is decoupled and sent 2 responses; use a streaming call");
  });

  it('a stream to a non-decoupled model gets one response then complete', async () => {
    const inst = manualInstance();
    const s = make(config(), [inst]);
    const sink = collect();
    s.enqueueStream!(req(4), sink);
    await flush();
    inst.calls[0]!.resolve();
    await flush();
    expect(sink.responses.map(valueOf)).toEqual([4]);
    expect(sink.completed).toBe('ok');
  });
});

describe('instance results and statistics', () => {
  it('fails the batch with INTERNAL when an instance returns the wrong number of results', async () => {
    const inst = manualInstance();
    const s = make(config({ dynamic_batching: dynamicBatching() }), [inst]);
    const a = settle(s.enqueue(req(1)));
    await flush();
    inst.calls[0]!.resolve([]);
    await flush();
    expect(a.error?.code).toBe('INTERNAL');
    expect(a.error?.message).toBe("model 'm' instance returned 0 results for 1 requests");
  });

  it('fails only the request whose result is an error', async () => {
    const inst = manualInstance();
    const s = make(config({ max_batch_size: 4, dynamic_batching: dynamicBatching() }), [inst]);
    void s.enqueue(req(0));
    await flush();
    const a = settle(s.enqueue(req(1)));
    const b = settle(s.enqueue(req(2)));
    inst.calls[0]!.resolve();
    await flush();
    const [ra] = identity(inst.calls[1]!.batch);
    inst.calls[1]!.resolve([ra!, new InferError('INVALID_ARG', 'bad row')]);
    await flush();
    expect(valueOf(a.value!)).toBe(1);
    expect(b.error?.message).toBe('bad row');
  });

  it("uses the instance's lastTimings for compute statistics", async () => {
    const seen: number[][] = [];
    const stats: StatsRecorder = {
      ...nullStatsRecorder,
      execution: (n, t) => void seen.push([n, t.computeInputNs, t.computeInferNs, t.computeOutputNs]),
      requestSucceeded: (_ns, d) => void seen.push([d.computeInputNs, d.computeInferNs, d.computeOutputNs]),
    };
    const inst: ModelInstance = {
      execute: (batch) => Promise.resolve({ results: identity(batch), timings: { computeInputNs: 10, computeInferNs: 20, computeOutputNs: 30 } }),
      dispose: () => Promise.resolve(),
    };
    await make(config(), [inst], stats).enqueue(req(1, { rows: 3 }));
    expect(seen).toEqual([
      [3, 10, 20, 30],
      [10, 20, 30],
    ]);
  });

  it('a throwing StatsRecorder never keeps a request from its answer', async () => {
    const boom = () => {
      throw new Error('stats down');
    };
    const stats: StatsRecorder = { requestQueued: boom, requestDequeued: boom, execution: boom, requestSucceeded: boom, requestFailed: boom };
    const errors: string[] = [];
    const s = createScheduler(config({ dynamic_batching: dynamicBatching() }), {
      modelName: 'm',
      version: 1,
      instances: [{ execute: (b) => Promise.resolve({ results: identity(b) }), dispose: () => Promise.resolve() }],
      stats,
      log: { ...silentLogger, error: (m) => void errors.push(m) },
      infer: () => Promise.reject(new Error('unused')),
    });
    expect(valueOf(await s.enqueue(req(7)))).toBe(7);
    expect(s.inflight).toBe(0);
    expect(errors[0]).toBe("model 'm': statistics hook requestQueued threw: stats down");
  });

  it('prefers healthy instances', async () => {
    const sick = manualInstance();
    Object.assign(sick, { healthy: false });
    const well = manualInstance();
    const s = make(config(), [sick, well]);
    void s.enqueue(req(1));
    await flush();
    expect(well.calls).toHaveLength(1);
    expect(sick.calls).toHaveLength(0);
  });

  it('waits for a busy healthy instance instead of sending work to a down one; uses down ones only when none is healthy', async () => {
    const sick = manualInstance();
    Object.assign(sick, { healthy: false });
    const well = manualInstance();
    const s = make(config(), [sick, well]);
    void s.enqueue(req(1));
    await flush();
    void s.enqueue(req(2));
    await flush();
    expect(well.calls).toHaveLength(1);
    expect(sick.calls).toHaveLength(0); // request 2 waits for `well`
    well.calls[0]!.resolve();
    await flush();
    expect(well.calls).toHaveLength(2);
    expect(sick.calls).toHaveLength(0);
    // Every instance down: the work goes to one of them (its worker host waits for the restart).
    Object.assign(well, { healthy: false });
    well.calls[1]!.resolve();
    void s.enqueue(req(3));
    await flush();
    expect(sick.calls.length + well.calls.length).toBe(3);
  });

  it('applies max_queue_size per priority level', async () => {
    const inst = manualInstance();
    const policy = (max: number) => ({ timeout_action: 'REJECT' as const, default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: max });
    const cfg = config({
      max_batch_size: 1,
      dynamic_batching: dynamicBatching({ priority_levels: 2, default_priority_level: 2, default_queue_policy: policy(0), priority_queue_policy: { '1': policy(1) } }),
    });
    const s = make(cfg, [inst]);
    void s.enqueue(req(0));
    await flush();
    void s.enqueue(req(1, { priority: 1 }));
    const rejected = settle(s.enqueue(req(2, { priority: 1 })));
    const low = [3, 4, 5].map((v) => settle(s.enqueue(req(v))));
    await flush();
    expect(rejected.error?.message).toMatch(/Exceeds maximum queue size$/);
    expect(low.every((r) => !r.done)).toBe(true);
  });

  it('rejects a request whose inputs disagree on the batch size', async () => {
    const s = make(config({ dynamic_batching: dynamicBatching() }), [manualInstance()]);
    const r = req(1, { rows: 2 });
    const bad = { ...r, inputs: [...r.inputs, { ...req(1, { rows: 3 }).inputs[0]!, name: 'INPUT1' }] };
    await expect(s.enqueue(bad)).rejects.toThrow("input 'INPUT1' batch size does not match other inputs for 'm'");
  });
});

describe('with the worker-thread identity backend', () => {
  it('batches concurrent requests through a real worker and answers each with its own rows', async () => {
    const cfg = config({ name: 'id', backend: 'identity', max_batch_size: 16, dynamic_batching: dynamicBatching() });
    const model = await identityBackend().loadModel({ config: cfg, version: 1, modelDir: '/nonexistent', versionDir: '/nonexistent/1', log: silentLogger });
    const worker = await model.createInstance({ name: 'id_0_0', kind: 'CPU', device: 0, groupName: 'id' });
    try {
      const sizes: number[] = [];
      const stats: StatsRecorder = { ...nullStatsRecorder, execution: (n) => void sizes.push(n) };
      const s = createScheduler(cfg, { modelName: 'id', version: 1, instances: [worker], stats, infer: () => Promise.reject(new Error('unused')) });
      const results = await Promise.all(Array.from({ length: 64 }, (_, i) => s.enqueue(req(i, { model: 'id' }))));
      expect(results.map(valueOf)).toEqual(Array.from({ length: 64 }, (_, i) => i));
      expect(Math.max(...sizes)).toBeGreaterThan(1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(16);
      await s.stop();
    } finally {
      await worker.dispose();
      await model.dispose();
    }
  });
});

describe('sequence batching', () => {
  const sequenceBatching = (iterative: boolean) => ({ max_sequence_idle_microseconds: 1_000_000, control_input: [], state: [], iterative_sequence: iterative });
  it('gives a sequence_batching model the sequence batcher', () => {
    const s = createScheduler(config({ sequence_batching: sequenceBatching(false) }), { modelName: 'm', version: 1, instances: [manualInstance()], infer: () => Promise.reject(new Error('unused')) });
    expect(s).toBeInstanceOf(SequenceBatcher);
  });

  it('refuses iterative_sequence (request rescheduling) at load with UNSUPPORTED rather than ignoring it', () => {
    let error: unknown;
    try {
      createScheduler(config({ sequence_batching: sequenceBatching(true) }), { modelName: 'm', version: 1, instances: [manualInstance()], infer: () => Promise.reject(new Error('unused')) });
    } catch (e) {
      error = e;
    }
    expect(InferError.is(error) && error.code).toBe('UNSUPPORTED');
    expect((error as Error).message).toMatch(/iterative_sequence/);
  });
});
