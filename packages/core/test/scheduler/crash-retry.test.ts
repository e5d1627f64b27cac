/**
 * Poison isolation through crashes (crash-retry.ts), over real worker instances of the `fault` test
 * backend: the requests of a batch whose worker crashed are re-run alone, once, so the one that
 * crashes it fails alone; the bounds (timeout, cancellation, preserve_ordering); and the crash-loop
 * detector: crashes pinned on requests keep the instance serving, a model that crashes on
 * everything still goes down. The batcher runs on a manual clock: a batch forms when its preferred
 * size is queued, and time moves only when the test says so.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger, type InferError, type InferRequest, type InferResponse, type ModelConfig } from '../../src/index.ts';
import { type ModelInstance } from '../../src/backend/index.ts';
import { createScheduler, nullStatsRecorder, type Scheduler } from '../../src/scheduler/index.ts';
import { captureLog, faultBackend, manualClock, type CapturedLog, type ManualClock } from '../../src/testing/index.ts';
import { config, dynamicBatching, req, settle, valueOf } from './helpers.ts';

interface Harness {
  readonly s: Scheduler;
  readonly clock: ManualClock;
  readonly log: CapturedLog;
  readonly instance: ModelInstance & { restarts?: number };
  /** Reasons the instance went down with (onUnavailable). */
  readonly down: string[];
  readonly counts: { retried: number; poison: number };
  dispose(): Promise<void>;
}

let open: Harness | undefined;
afterEach(async () => {
  await open?.dispose();
  open = undefined;
});

async function harness(o: { batch?: number; maxRestarts?: number; executeTimeoutMs?: number; dynamic?: Partial<NonNullable<ModelConfig['dynamic_batching']>> } = {}): Promise<Harness> {
  const batch = o.batch ?? 4;
  const cfg = config({
    name: 'f',
    backend: 'fault',
    max_batch_size: 8,
    dynamic_batching: dynamicBatching({ preferred_batch_size: [batch], max_queue_delay_microseconds: 1000, ...o.dynamic }),
  });
  const backend = faultBackend({
    restart: { maxRestarts: o.maxRestarts ?? 5, windowMs: 60_000, initialBackoffMs: 5, maxBackoffMs: 40 },
    ...(o.executeTimeoutMs ? { executeTimeoutMs: o.executeTimeoutMs } : {}),
  });
  const model = await backend.loadModel({ config: cfg, version: 1, modelDir: '/nonexistent', versionDir: '/nonexistent/1', log: silentLogger });
  const down: string[] = [];
  const instance = await model.createInstance({ name: 'f_0_0', kind: 'CPU', device: 0, groupName: 'f', onUnavailable: (r) => down.push(r) });
  const clock = manualClock();
  const log = captureLog();
  const counts = { retried: 0, poison: 0 };
  const stats = { ...nullStatsRecorder, crashRetried: () => void counts.retried++, poisonIsolated: () => void counts.poison++ };
  const s = createScheduler(cfg, { modelName: 'f', version: 1, instances: [instance], infer: () => Promise.reject(new Error('unused')), clock, stats, log });
  open = {
    s,
    clock,
    log,
    instance,
    down,
    counts,
    async dispose() {
      await s.stop();
      await instance.dispose();
      await model.dispose();
    },
  };
  return open;
}

/** A request of value `v` asking the fault backend for `fault`. */
const faulty = (v: number, fault: string, extra: Partial<InferRequest> = {}) => req(v, { model: 'f', parameters: { fault }, ...extra });

/** Waits (bounded) until every outcome is known. */
async function settled(outcomes: { done: boolean }[]): Promise<void> {
  await vi.waitFor(() => expect(outcomes.every((o) => o.done)).toBe(true), { timeout: 30_000, interval: 10 });
}

/** Each outcome as its value, or its error's code and message. */
function shown(outcomes: { value?: InferResponse; error?: InferError }[]): (number | string)[] {
  return outcomes.map((o) => (o.error ? `${o.error.code}: ${o.error.message}` : valueOf(o.value!)));
}

const CRASH = "INTERNAL: model 'f' instance 'f_0_0' crashed: worker exited with code 3";

describe('a batch whose worker crashed', () => {
  it('re-runs each request alone, once: only the one that crashes it fails, with the crash error; counted and logged', async () => {
    const h = await harness();
    const four = ['ok', 'exit', 'ok', 'ok'].map((fault, v) => settle(h.s.enqueue(faulty(v, fault, { id: `q${v}` }))));
    await settled(four);
    expect(shown(four)).toEqual([0, CRASH, 2, 3]);
    expect(h.counts).toEqual({ retried: 4, poison: 1 });
    await vi.waitFor(() => expect(h.instance.healthy).toBe(true), { timeout: 20_000 });
    // The batch's crash, then the poisoned request's alone: two restarts, never down.
    expect(h.instance.restarts).toBe(2);
    expect(h.down).toEqual([]);
    expect(h.log.lines).toContainEqual(expect.stringMatching(/^W model 'f' version 1: a batch of 4 requests crashed its instance \(.*exited with code 3\); re-running 4 of them alone/));
    expect(h.log.lines).toContainEqual(`W model 'f' version 1: request "q1" crashed its instance running alone (re-run after its batch crashed); it fails alone as the cause: ${CRASH.slice(10)}`);
  });

  it('a request that overruns the execute timeout fails alone the same way', async () => {
    const h = await harness({ batch: 3, executeTimeoutMs: 400 });
    const three = ['ok', 'hang', 'ok'].map((fault, v) => settle(h.s.enqueue(faulty(v, fault))));
    await settled(three);
    expect(shown(three)).toEqual([0, "INTERNAL: model 'f' instance 'f_0_0' crashed: execute timed out after 400 ms", 2]);
    expect(h.counts).toEqual({ retried: 3, poison: 1 });
  });

  it('with preserve_ordering, answers still come in arrival order', async () => {
    const h = await harness({ dynamic: { preserve_ordering: true } });
    const order: number[] = [];
    const four = ['ok', 'exit', 'ok', 'ok'].map((fault, v) => {
      const p = h.s.enqueue(faulty(v, fault));
      void p.then(
        () => order.push(v),
        () => order.push(v),
      );
      return settle(p);
    });
    await settled(four);
    expect(shown(four)).toEqual([0, CRASH, 2, 3]);
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('does not re-run a request past its queue policy timeout, nor one cancelled', async () => {
    const h = await harness({
      dynamic: { default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 60_000_000, allow_timeout_override: true, max_queue_size: 0 } },
    });
    const cancel = new AbortController();
    const four = [
      // Its timeout (500 µs on the batcher's clock) passes while its batch runs.
      faulty(0, 'delay:100', { timeoutUs: 500 }),
      faulty(1, 'exit'),
      faulty(2, 'ok'),
      faulty(3, 'ok', { signal: cancel.signal }),
    ].map((r) => settle(h.s.enqueue(r)));
    // The batch of 4 left the queue at once (its preferred size); its worker sleeps 100 ms, then exits.
    h.clock.advance(1000);
    cancel.abort();
    await settled(four);
    expect(shown(four)).toEqual([CRASH, CRASH, 2, 'CANCELLED: request cancelled']);
    expect(h.counts).toEqual({ retried: 2, poison: 1 });
  });
});

describe('the crash-loop detector with crashes pinned on requests', () => {
  it('a burst of requests that each crash their instance (more than maxRestarts) leaves it serving: the innocent ones succeed', async () => {
    const h = await harness({ batch: 8, maxRestarts: 5 });
    const eight = ['exit', 'exit', 'exit', 'exit', 'exit', 'exit', 'ok', 'ok'].map((fault, v) => settle(h.s.enqueue(faulty(v, fault))));
    await settled(eight);
    expect(shown(eight)).toEqual([CRASH, CRASH, CRASH, CRASH, CRASH, CRASH, 6, 7]);
    expect(h.down).toEqual([]);
    const after = settle(h.s.enqueue(faulty(9, 'ok')));
    h.clock.advance(1000);
    await settled([after]);
    expect(valueOf(after.value!)).toBe(9);
  });

  it('crashes with successful executions between them never take it down', async () => {
    const h = await harness({ maxRestarts: 2 });
    for (let i = 0; i < 5; i++) {
      const crash = settle(h.s.enqueue(faulty(i, 'exit')));
      h.clock.advance(1000);
      await settled([crash]);
      expect(crash.error?.message).toBe(CRASH.slice(10));
      const fine = settle(h.s.enqueue(faulty(i, 'ok')));
      h.clock.advance(1000);
      await settled([fine]);
      expect(valueOf(fine.value!)).toBe(i);
    }
    expect(h.down).toEqual([]);
  });

  it('a model that crashes on everything still goes down: alone, after maxRestarts + 1 crashes in a row', async () => {
    const h = await harness({ maxRestarts: 2 });
    for (let i = 0; i < 3; i++) {
      const crash = settle(h.s.enqueue(faulty(i, 'exit')));
      h.clock.advance(1000);
      await settled([crash]);
    }
    await vi.waitFor(() => expect(h.down).toEqual([expect.stringMatching(/crashed 3 times in a row; last cause: worker exited with code 3$/)]), { timeout: 20_000 });
  });

  it('a model that crashes on everything still goes down: batched, at the first fresh crash once the row is past maxRestarts', async () => {
    const h = await harness({ maxRestarts: 2 });
    const four = [0, 1, 2, 3].map((v) => settle(h.s.enqueue(faulty(v, 'exit'))));
    await settled(four);
    expect(shown(four)).toEqual([CRASH, CRASH, CRASH, CRASH]);
    // The batch and its four re-runs: 5 crashes, the re-runs' pinned on their requests.
    expect(h.down).toEqual([]);
    const next = settle(h.s.enqueue(faulty(4, 'exit')));
    h.clock.advance(1000);
    await settled([next]);
    await vi.waitFor(() => expect(h.down).toEqual([expect.stringMatching(/crashed 6 times in a row; last cause: worker exited with code 3$/)]), { timeout: 20_000 });
  });
});
