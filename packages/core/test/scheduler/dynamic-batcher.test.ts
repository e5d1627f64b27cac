import { describe, expect, it } from 'vitest';
import { typedView } from '../../src/index.ts';
import { createScheduler, nullStatsRecorder } from '../../src/scheduler/index.ts';
import { manualClock } from '../../src/testing/index.ts';
import type { InferRequest, InferResponse, ModelConfig } from '../../src/index.ts';
import type { ModelInstance } from '../../src/backend/index.ts';
import type { StatsRecorder } from '../../src/scheduler/index.ts';
import { config, dynamicBatching, flush, input, manualInstance, req, settle, valueOf } from './helpers.ts';

function batcher(cfg: ModelConfig, instances: ModelInstance[], stats: StatsRecorder = nullStatsRecorder) {
  const clock = manualClock();
  const scheduler = createScheduler(cfg, {
    modelName: cfg.name,
    version: 1,
    instances,
    clock,
    stats,
    infer: () => Promise.reject(new Error('unused')),
  });
  return { clock, scheduler };
}
const sizes = (inst: ReturnType<typeof manualInstance>) => inst.calls.map((c) => c.batch.length);
/** The value the first request of an execution carries. */
const firstValue = (c: { batch: readonly InferRequest[] }) => (typedView(c.batch[0]!.inputs[0]!) as Float32Array)[0];

describe('direct scheduler', () => {
  it('runs one request per execute, one in flight per instance, all instances used', async () => {
    const a = manualInstance();
    const b = manualInstance();
    const { scheduler } = batcher(config(), [a, b]);
    const outs = [1, 2, 3].map((v) => settle(scheduler.enqueue(req(v))));
    await flush();
    expect(sizes(a)).toEqual([1]);
    expect(sizes(b)).toEqual([1]);
    expect(scheduler.inflight).toBe(3);
    a.calls[0]!.resolve();
    await flush();
    expect(sizes(a)).toEqual([1, 1]);
    a.calls[1]!.resolve();
    b.calls[0]!.resolve();
    await flush();
    expect(outs.map((o) => valueOf(o.value!))).toEqual([1, 2, 3]);
    expect(scheduler.inflight).toBe(0);
  });

  it('fails only the batch whose instance rejects and keeps the instance', async () => {
    const a = manualInstance();
    const { scheduler } = batcher(config(), [a]);
    const first = settle(scheduler.enqueue(req(1)));
    const second = settle(scheduler.enqueue(req(2)));
    await flush();
    a.calls[0]!.reject(new Error('worker exited'));
    await flush();
    expect(first.error?.code).toBe('INTERNAL');
    expect(first.error?.message).toBe('worker exited');
    a.calls[1]!.resolve();
    await flush();
    expect(valueOf(second.value!)).toBe(2);
  });
});

describe('dynamic batcher', () => {
  it('batches requests queued while the instance is busy, up to max_batch_size', async () => {
    const inst = manualInstance();
    const { scheduler } = batcher(config({ max_batch_size: 4, dynamic_batching: dynamicBatching() }), [inst]);
    const outs = Array.from({ length: 7 }, (_, i) => settle(scheduler.enqueue(req(i))));
    await flush();
    expect(sizes(inst)).toEqual([1]);
    inst.calls[0]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 4]);
    inst.calls[1]!.resolve();
    await flush();
    inst.calls[2]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 4, 2]);
    expect(outs.map((o) => valueOf(o.value!))).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('waits max_queue_delay for a preferred size, then sends what it has', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 8, dynamic_batching: dynamicBatching({ preferred_batch_size: [4], max_queue_delay_microseconds: 1000 }) });
    const { scheduler, clock } = batcher(cfg, [inst]);
    for (let i = 0; i < 3; i++) void scheduler.enqueue(req(i));
    await flush();
    expect(inst.calls).toHaveLength(0);
    clock.advance(999);
    await flush();
    expect(inst.calls).toHaveLength(0);
    clock.advance(1);
    await flush();
    expect(sizes(inst)).toEqual([3]);
  });

  it('does not wait its queue delay again for a batch an upstream batcher already formed', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 8, dynamic_batching: dynamicBatching({ preferred_batch_size: [8], max_queue_delay_microseconds: 10_000 }) });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0, { rows: 3, preformed: true }));
    await flush();
    // Sent at once, no clock advance: the pipeline ensemble's batcher already waited for it.
    expect(inst.calls.map((c) => c.batch.map((r) => r.inputs[0]!.shape[0]))).toEqual([[3]]);
    // An ordinary request still waits for its delay.
    void scheduler.enqueue(req(1, { rows: 1 }));
    inst.calls[0]!.resolve();
    await flush();
    expect(inst.calls).toHaveLength(1);
  });

  it('sends as soon as a preferred size is reached and trims to it', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 8, dynamic_batching: dynamicBatching({ preferred_batch_size: [2, 4], max_queue_delay_microseconds: 100_000 }) });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0, { rows: 3 }));
    await flush();
    expect(inst.calls).toHaveLength(0);
    void scheduler.enqueue(req(1, { rows: 1 }));
    await flush();
    expect(inst.calls.map((c) => c.batch.map((r) => r.inputs[0]!.shape[0]))).toEqual([[3, 1]]);
    // Busy instance: 6 single requests queue; the batch is cut at the preferred 4.
    for (let i = 0; i < 6; i++) void scheduler.enqueue(req(i));
    inst.calls[0]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([2, 4]);
  });

  it('trims to the best preferred size even without a queue delay (Triton)', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 8, dynamic_batching: dynamicBatching({ preferred_batch_size: [4] }) });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    for (let i = 0; i < 6; i++) void scheduler.enqueue(req(i));
    inst.calls[0]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 4]);
    inst.calls[1]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 4, 2]);
  });

  it('serves strict priority, default level for out-of-range priorities', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 1, dynamic_batching: dynamicBatching({ priority_levels: 3, default_priority_level: 2 }) });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    void scheduler.enqueue(req(3, { priority: 3 }));
    void scheduler.enqueue(req(2, { priority: 9 }));
    void scheduler.enqueue(req(1, { priority: 1 }));
    void scheduler.enqueue(req(22));
    for (let i = 0; i < 5; i++) {
      inst.calls[i]!.resolve();
      await flush();
    }
    expect(inst.calls.map(firstValue)).toEqual([
      0, 1, 2, 22, 3,
    ]);
  });

  it('rejects past max_queue_size with UNAVAILABLE', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 1,
      dynamic_batching: dynamicBatching({
        default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 2 },
      }),
    });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    void scheduler.enqueue(req(1));
    void scheduler.enqueue(req(2));
    const over = settle(scheduler.enqueue(req(3, { id: 'x7' })));
    await flush();
    expect(over.error?.code).toBe('UNAVAILABLE');
    expect(over.error?.message).toBe('[request id: x7] Exceeds maximum queue size');
  });

  it('expires queued requests on timers even while every instance is busy', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 4,
      dynamic_batching: dynamicBatching({
        default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 500, allow_timeout_override: true, max_queue_size: 0 },
      }),
    });
    const { scheduler, clock } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    const a = settle(scheduler.enqueue(req(1)));
    const b = settle(scheduler.enqueue(req(2, { timeoutUs: 100 })));
    const c = settle(scheduler.enqueue(req(3, { timeoutUs: 5000 })));
    clock.advance(100);
    await flush();
    expect(b.error?.message).toBe('Request timeout expired');
    expect(b.error?.code).toBe('UNAVAILABLE');
    expect(a.done).toBe(false);
    clock.advance(400);
    await flush();
    expect(a.error?.message).toBe('Request timeout expired');
    expect(c.error?.message).toBe('Request timeout expired'); // override can only lower
    expect(scheduler.inflight).toBe(1);
  });

  it('a request timeout cannot set one where the policy has none (Triton)', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 4,
      dynamic_batching: dynamicBatching({
        default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: true, max_queue_size: 0 },
      }),
    });
    const { scheduler, clock } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    const r = settle(scheduler.enqueue(req(1, { timeoutUs: 10 })));
    clock.advance(1000);
    await flush();
    expect(r.done).toBe(false);
  });

  it('DELAY moves expired requests behind the others', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 1,
      dynamic_batching: dynamicBatching({
        default_queue_policy: { timeout_action: 'DELAY', default_timeout_microseconds: 1_000_000, allow_timeout_override: true, max_queue_size: 0 },
      }),
    });
    const { scheduler, clock } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    void scheduler.enqueue(req(1, { timeoutUs: 10 }));
    void scheduler.enqueue(req(2));
    clock.advance(10);
    for (let i = 0; i < 3; i++) {
      inst.calls[i]!.resolve();
      await flush();
    }
    expect(inst.calls.map(firstValue)).toEqual([0, 2, 1]);
  });

  it('cancels queued and running requests with CANCELLED', async () => {
    const inst = manualInstance();
    const { scheduler } = batcher(config({ max_batch_size: 4, dynamic_batching: dynamicBatching() }), [inst]);
    const running = new AbortController();
    const queued = new AbortController();
    const r1 = settle(scheduler.enqueue(req(1, { signal: running.signal })));
    await flush();
    const r2 = settle(scheduler.enqueue(req(2, { signal: queued.signal })));
    queued.abort();
    await flush();
    expect(r2.error?.code).toBe('CANCELLED');
    running.abort();
    await flush();
    expect(r1.error?.code).toBe('CANCELLED');
    expect(inst.calls[0]!.signal.aborted).toBe(true);
    inst.calls[0]!.resolve();
    await flush();
    expect(inst.calls).toHaveLength(1);
    expect(scheduler.inflight).toBe(0);
  });

  it('skips a mismatched shape without cutting the batch; it heads the next batch', async () => {
    const inst = manualInstance();
    const { scheduler } = batcher(config({ max_batch_size: 8, dynamic_batching: dynamicBatching() }), [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    void scheduler.enqueue(req(1, { cols: 2 }));
    void scheduler.enqueue(req(2, { cols: 3 }));
    void scheduler.enqueue(req(3, { cols: 2 }));
    void scheduler.enqueue(req(4, { cols: 3 }));
    inst.calls[0]!.resolve();
    await flush();
    expect(inst.calls[1]!.batch.map((r) => r.inputs[0]!.shape[1])).toEqual([2, 2]);
    inst.calls[1]!.resolve();
    await flush();
    expect(inst.calls[2]!.batch.map((r) => r.inputs[0]!.shape[1])).toEqual([3, 3]);
  });

  it('with preserve_ordering a mismatched shape cuts the batch (Triton)', async () => {
    const inst = manualInstance();
    const { scheduler } = batcher(config({ max_batch_size: 8, dynamic_batching: dynamicBatching({ preserve_ordering: true }) }), [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    for (const cols of [2, 3, 2]) void scheduler.enqueue(req(1, { cols }));
    inst.calls[0]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 1]);
  });

  it('allow_ragged_batch inputs co-batch with different shapes', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 8, input: [input('INPUT0', [-1], { allow_ragged_batch: true })], dynamic_batching: dynamicBatching() });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    void scheduler.enqueue(req(1, { cols: 2 }));
    void scheduler.enqueue(req(2, { cols: 5 }));
    inst.calls[0]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 2]);
  });

  it('only co-batches requests with the same set of optional inputs', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 8,
      input: [input('INPUT0', [2]), input('OPT', [2], { optional: true })],
      dynamic_batching: dynamicBatching(),
    });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    const withOpt = req(1);
    void scheduler.enqueue({ ...withOpt, inputs: [...withOpt.inputs, { ...withOpt.inputs[0]!, name: 'OPT' }] });
    void scheduler.enqueue(req(2));
    void scheduler.enqueue(req(3));
    inst.calls[0]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 1]); // head (with OPT) alone: the others differ
    inst.calls[1]!.resolve();
    await flush();
    expect(sizes(inst)).toEqual([1, 1, 2]);
  });

  it('pads opted-in inputs so different lengths share a batch', async () => {
    const inst = manualInstance();
    const cfg = config({ max_batch_size: 8, dynamic_batching: dynamicBatching(), parameters: { 'tritium.pad.INPUT0': { string_value: '-1' } } });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    const short = settle(scheduler.enqueue(req(1, { cols: 1 })));
    void scheduler.enqueue(req(2, { cols: 3 }));
    inst.calls[0]!.resolve();
    await flush();
    expect(inst.calls[1]!.batch.map((r) => r.inputs[0]!.shape)).toEqual([
      [1, 3],
      [1, 3],
    ]);
    inst.calls[1]!.resolve();
    await flush();
    expect([...new Float32Array((short.value as InferResponse).outputs[0]!.data.slice().buffer)]).toEqual([1, -1, -1]);
  });

  it('trims declared outputs back to each padded request (tritium.unpad.*)', async () => {
    const inst = manualInstance();
    const cfg = config({
      max_batch_size: 8,
      dynamic_batching: dynamicBatching(),
      parameters: { 'tritium.pad.INPUT0': { string_value: '-1' }, 'tritium.unpad.OUTPUT0': { string_value: 'INPUT0' } },
    });
    const { scheduler } = batcher(cfg, [inst]);
    void scheduler.enqueue(req(0));
    await flush();
    const short = settle(scheduler.enqueue(req(1, { cols: 1 })));
    const long = settle(scheduler.enqueue(req(2, { cols: 3 })));
    inst.calls[0]!.resolve();
    await flush();
    inst.calls[1]!.resolve();
    await flush();
    expect(short.value!.outputs[0]!.shape).toEqual([1, 1]);
    expect(long.value!.outputs[0]!.shape).toEqual([1, 3]);
  });

  it('preserve_ordering releases responses in arrival order', async () => {
    const a = manualInstance();
    const b = manualInstance();
    const { scheduler } = batcher(config({ max_batch_size: 1, dynamic_batching: dynamicBatching({ preserve_ordering: true }) }), [a, b]);
    const order: number[] = [];
    void scheduler.enqueue(req(1)).then((r) => order.push(valueOf(r)));
    void scheduler.enqueue(req(2)).then((r) => order.push(valueOf(r)));
    await flush();
    b.calls[0]!.resolve();
    await flush();
    expect(order).toEqual([]);
    a.calls[0]!.resolve();
    await flush();
    expect(order).toEqual([1, 2]);
  });

  it('records statistics through the StatsRecorder hooks', async () => {
    const events: string[] = [];
    const stats: StatsRecorder = {
      requestQueued: () => events.push('queued'),
      requestDequeued: (ns) => events.push(`dequeued ${ns}`),
      execution: (n, t) => events.push(`exec ${n} ${t.computeInferNs}`),
      requestSucceeded: (ns, d) => events.push(`ok ${ns} q${d.queueNs}`),
      requestFailed: (ns, reason, dq) => events.push(`fail ${reason} ${dq}`),
    };
    const inst = manualInstance();
    const { scheduler, clock } = batcher(config({ dynamic_batching: dynamicBatching({ max_queue_delay_microseconds: 10 }) }), [inst], stats);
    void scheduler.enqueue(req(1, { rows: 2 }));
    clock.advance(10);
    await flush();
    clock.advance(5);
    inst.calls[0]!.resolve();
    await flush();
    expect(events).toEqual(['queued', 'dequeued 10000', 'exec 2 5000', 'ok 15000 q10000']);
  });

  it('stop() sends queued requests without waiting for the queue delay', async () => {
    const inst = manualInstance();
    const { scheduler } = batcher(config({ dynamic_batching: dynamicBatching({ max_queue_delay_microseconds: 1_000_000 }) }), [inst]);
    const r = settle(scheduler.enqueue(req(1)));
    await flush();
    expect(inst.calls).toHaveLength(0);
    const stopped = settle(scheduler.stop());
    await flush();
    expect(inst.calls).toHaveLength(1);
    inst.calls[0]!.resolve();
    await flush();
    expect(r.value).toBeDefined();
    expect(stopped.done).toBe(true);
  });

  it('stop() refuses new work and resolves after draining', async () => {
    const inst = manualInstance();
    const { scheduler } = batcher(config({ dynamic_batching: dynamicBatching() }), [inst]);
    const first = settle(scheduler.enqueue(req(1)));
    await flush();
    const stopped = settle(scheduler.stop());
    const late = settle(scheduler.enqueue(req(2)));
    await flush();
    expect(late.error?.code).toBe('UNAVAILABLE');
    expect(stopped.done).toBe(false);
    inst.calls[0]!.resolve();
    await flush();
    expect(first.value).toBeDefined();
    expect(stopped.done).toBe(true);
  });
});
