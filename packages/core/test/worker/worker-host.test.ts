/**
 * The worker host with real worker threads: round trips, crash isolation and restart (throw, exit,
 * execute timeout, heap limit), give-up after repeated crashes, BLS, cancellation, decoupled sinks.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import type { WorkerInstance, WorkerInstanceOptions } from '../../src/worker/types.ts';
import { TEST_ENTRIES, type TestModelInit } from '../../src/testing/index.ts';
import type { ExecuteResult } from '../../src/backend/spi.ts';
import type { CallFrame, InferRequest, InferResponse, ResponseSink } from '../../src/types.ts';
import { tensorFromStrings, type Tensor } from '../../src/tensor/tensor.ts';
import { decodeStrings } from '../../src/tensor/bytes-elements.ts';

const INIT: TestModelInit = { model: 'm', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] };
const never = new AbortController().signal;

function int32(name: string, values: number[]): Tensor {
  return { name, datatype: 'INT32', shape: [values.length], data: new Uint8Array(new Int32Array(values).buffer) };
}

function req(id: string, fault = 'ok', inputs: Tensor[] = [int32('INPUT0', [1, 2, 3])]): InferRequest {
  return { id, model: 'm', inputs, parameters: { fault } };
}

function spawn(name: string, extra: Partial<WorkerInstanceOptions<TestModelInit>> = {}): Promise<WorkerInstance> {
  return spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: INIT,
    model: 'm',
    instanceName: name,
    restart: { initialBackoffMs: 5, maxRestarts: 20 },
    ...extra,
  });
}

function ok(result: ExecuteResult | undefined): InferResponse {
  if (!result || InferError.is(result)) throw new Error(`expected a response, got ${(result as InferError | undefined)?.message}`);
  return result;
}

function ints(t: Tensor | undefined): number[] {
  return t ? [...new Int32Array(t.data.buffer, t.data.byteOffset, t.data.byteLength / 4)] : [];
}

describe('worker host: round trip', () => {
  let inst: WorkerInstance;
  beforeAll(async () => {
    inst = await spawnWorkerInstance<TestModelInit>({
      entry: TEST_ENTRIES.identity,
      init: { model: 'm', version: 1, inputs: ['A', 'B'], outputs: ['X', 'Y'] },
      model: 'm',
      instanceName: 'm_0_0',
    });
  });
  afterAll(() => inst.dispose());

  it('executes a batch and keeps the caller’s tensors intact', async () => {
    const a = int32('A', [7, 8]);
    const b = tensorFromStrings('B', [2], ['héllo', '']);
    // A view over part of a pooled Buffer: must be copied, not cloned whole or transferred.
    const pooled = Buffer.from(new Uint8Array(new Int32Array([5]).buffer));
    const c: Tensor = { name: 'A', datatype: 'INT32', shape: [1], data: pooled };
    const results = (await inst.execute(
      [
        { id: '1', model: 'm', inputs: [a, b], parameters: { s: 'x', n: 1.5, t: true } },
        // A bigint parameter cannot be packed as JSON: this batch goes by structured clone.
        { id: '2', model: 'm', inputs: [c, b], outputs: [{ name: 'Y' }], parameters: { big: 2n ** 60n } },
      ],
      never,
    )).results;
    expect(results).toHaveLength(2);
    const r1 = ok(results[0]);
    expect(r1.outputs.map((o) => o.name)).toEqual(['X', 'Y']);
    expect(ints(r1.outputs[0])).toEqual([7, 8]);
    expect(decodeStrings(r1.outputs[1]!.data)).toEqual(['héllo', '']);
    const r2 = ok(results[1]);
    expect(r2.outputs.map((o) => o.name)).toEqual(['Y']);
    // Caller's buffers are not detached.
    expect(ints(a)).toEqual([7, 8]);
    expect(pooled.readInt32LE(0)).toBe(5);
    expect(inst.healthy).toBe(true);
  });

  it('carries large and small tensors of one batch, untouched for the caller', async () => {
    const big = int32('A', Array.from({ length: 50_000 }, (_, i) => i - 7));
    const results = (await inst.execute(
      [
        { id: '1', model: 'm', inputs: [big, int32('B', [1])] },
        { id: '2', model: 'm', inputs: [int32('A', [3]), { ...big, name: 'B' }] },
      ],
      never,
    )).results;
    expect(ints(ok(results[0]).outputs[0])).toEqual(ints(big));
    expect(ints(ok(results[1]).outputs[1])).toEqual(ints(big));
    expect(ints(ok(results[1]).outputs[0])).toEqual([3]);
    expect(big.data.byteLength).toBe(200_000);
  });

  it('fails one request with its own error and leaves the rest', async () => {
    const results = (await inst.execute([{ id: 'bad', model: 'm', inputs: [] }, { id: 'good', model: 'm', inputs: [int32('A', [1]), int32('B', [2])] }], never)).results;
    expect(InferError.is(results[0])).toBe(true);
    expect((results[0] as InferError).code).toBe('INVALID_ARG');
    expect((results[0] as InferError).message).toContain("expected input 'A'");
    expect(ints(ok(results[1]).outputs[1])).toEqual([2]);
  });
});

describe('worker host: transferInputs', () => {
  it('transfers (detaches) whole-buffer inputs only when asked to', async () => {
    const inst = await spawn('t_0_0', { transferInputs: true });
    try {
      // Small tensors are packed (copied) into one buffer per batch; large ones travel on their own.
      const values = Array.from({ length: 20_000 }, (_, i) => i);
      const whole = int32('INPUT0', values);
      const small = int32('INPUT0', [4, 5]);
      const [r, r2] = (await inst.execute([req('1', 'ok', [whole]), req('2', 'ok', [small])], never)).results;
      expect(ints(ok(r).outputs[0])).toEqual(values);
      expect(ints(ok(r2).outputs[0])).toEqual([4, 5]);
      expect(whole.data.byteLength).toBe(0);
      expect(ints(small)).toEqual([4, 5]);
    } finally {
      await inst.dispose();
    }
  });
});

describe('worker host: crashes fail only in-flight requests, then restart', () => {
  // `a` has an execute timeout (hang), `c` a small heap and no timeout, so a slow OOM on a loaded
  // machine is never mistaken for a timeout; `b` is the bystander.
  let a: WorkerInstance;
  let b: WorkerInstance;
  let c: WorkerInstance;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([
      spawn('m_0_0', { executeTimeoutMs: 1_500 }),
      spawn('m_0_1'),
      spawn('m_0_2', { resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 } }),
    ]);
  });
  afterAll(() => Promise.all([a.dispose(), b.dispose(), c.dispose()]));

  const cases: [string, string, () => WorkerInstance][] = [
    ['throw', "model 'm' instance 'm_0_0' crashed: worker threw: Error: fault backend: uncaught throw on purpose", () => a],
    ['exit', "model 'm' instance 'm_0_0' crashed: worker exited with code 3", () => a],
    ['hang', "model 'm' instance 'm_0_0' crashed: execute timed out after 1500 ms", () => a],
    ['oom', "model 'm' instance 'm_0_2' crashed: worker exceeded its heap limit (ERR_WORKER_OUT_OF_MEMORY)", () => c],
  ];
  for (const [fault, message, pick] of cases) {
    it(`${fault}: INTERNAL for the in-flight batch, the other instance is unaffected, the instance recovers`, async () => {
      const victim = pick();
      const restartsBefore = victim.restarts;
      const other = b.execute([req('other', 'delay:50')], never);
      const crashed = victim.execute([req('victim', fault), req('neighbour')], never);
      await expect(crashed).rejects.toMatchObject({ code: 'INTERNAL', message });
      expect(victim.healthy).toBe(false);
      expect(ints(ok((await other).results[0]).outputs[0])).toEqual([1, 2, 3]);
      // Arrives while restarting: waits for the new worker.
      const after = (await victim.execute([req('next')], never)).results;
      expect(ints(ok(after[0]).outputs[0])).toEqual([1, 2, 3]);
      expect(victim.restarts).toBe(restartsBefore + 1);
      expect(victim.healthy).toBe(true);
    });
  }

  it('a rejecting execute fails its batch without restarting the worker', async () => {
    const restarts = a.restarts;
    await expect(a.execute([req('r', 'reject')], never)).rejects.toMatchObject({ code: 'INTERNAL', message: 'fault backend: execute rejected on purpose' });
    expect(ok(((await a.execute([req('n')], never)).results)[0]).id).toBe('n');
    expect(a.restarts).toBe(restarts);
  });

  it('forwards cancellation to the worker’s signal', async () => {
    const controller = new AbortController();
    const pending = a.execute([req('slow', 'delay:20000')], controller.signal);
    setTimeout(() => controller.abort(), 30);
    const [result] = (await pending).results;
    expect(InferError.is(result)).toBe(true);
    expect((result as InferError).code).toBe('CANCELLED');
    await expect(a.execute([req('x')], controller.signal)).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('forwards a cancellation made in the same turn as the execute call (the batch went out in that turn)', async () => {
    const controller = new AbortController();
    const pending = a.execute([req('slow', 'delay:20000')], controller.signal);
    controller.abort();
    const [result] = (await pending).results;
    expect((result as InferError).code).toBe('CANCELLED');
  });
});

describe('worker host: giving up', () => {
  it('calls onUnavailable after too many crashes in a row and then fails UNAVAILABLE (keepTrying false: no more restarts)', async () => {
    const reasons: string[] = [];
    const inst = await spawn('g_0_0', { restart: { maxRestarts: 1, initialBackoffMs: 5, windowMs: 60_000, keepTrying: false }, onUnavailable: (r) => reasons.push(r) });
    try {
      await expect(inst.execute([req('1', 'exit')], never)).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(inst.execute([req('2', 'exit')], never)).rejects.toMatchObject({ code: 'INTERNAL' });
      expect(reasons).toEqual(["model 'm' instance 'g_0_0' crashed 2 times in a row; last cause: worker exited with code 3"]);
      expect(inst.healthy).toBe(false);
      await expect(inst.execute([req('3')], never)).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: `model 'm' instance 'g_0_0' is unavailable: ${reasons[0]}`,
      });
    } finally {
      await inst.dispose();
    }
  });

  it('bounds the wait for a restart', async () => {
    const inst = await spawn('w_0_0', { restart: { initialBackoffMs: 60_000, maxBackoffMs: 60_000, waitMs: 20 } });
    try {
      await expect(inst.execute([req('1', 'exit')], never)).rejects.toMatchObject({ code: 'INTERNAL' });
      await expect(inst.execute([req('2')], never)).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: "model 'm' instance 'w_0_0' is restarting after a crash (worker exited with code 3) and did not recover within 20 ms",
      });
    } finally {
      await inst.dispose();
    }
  });

  it('dispose fails in-flight and waiting executes UNAVAILABLE and never hangs', async () => {
    const inst = await spawn('d_0_0', { restart: { initialBackoffMs: 60_000, maxBackoffMs: 60_000 } });
    // Handlers are attached before dispose: the rejection lands while dispose is still awaited.
    const inflight = inst.execute([req('1', 'delay:20000')], never).catch((e: unknown) => e);
    await inst.dispose();
    expect(await inflight).toMatchObject({ code: 'UNAVAILABLE', message: "model 'm' instance 'd_0_0' is unloaded" });
    await expect(inst.execute([req('2')], never)).rejects.toMatchObject({ code: 'UNAVAILABLE' });

    const restarting = await spawn('d_0_1', { restart: { initialBackoffMs: 60_000, maxBackoffMs: 60_000 } });
    await expect(restarting.execute([req('3', 'exit')], never)).rejects.toMatchObject({ code: 'INTERNAL' });
    const waiting = restarting.execute([req('4')], never).catch((e: unknown) => e);
    await restarting.dispose();
    expect(await waiting).toMatchObject({ code: 'UNAVAILABLE', message: "model 'm' instance 'd_0_1' is unloaded" });
  });

  it('rejects a failing createInstance with its own error', async () => {
    await expect(
      spawnWorkerInstance({ entry: TEST_ENTRIES.initFails, init: { reason: 'no weights' }, model: 'm', instanceName: 'm_0_0' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARG', message: 'bad init: no weights' });
    await expect(
      spawnWorkerInstance({ entry: TEST_ENTRIES.noCreate, init: null, model: 'm', instanceName: 'm_0_0' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringContaining('does not export createInstance') });
  });
});

describe('worker host: BLS and decoupled', () => {
  it('lets worker code call other models through the main thread', async () => {
    const seen: string[] = [];
    const inst = await spawn('b_0_0', {
      infer: async (request) => {
        seen.push(`${request.model}:${request.id}`);
        if (request.model === 'missing') throw new InferError('NOT_FOUND', "Request for unknown model: 'missing' is not found");
        const doubled = ints(request.inputs[0]).map((x) => x * 2);
        return { id: request.id, model: request.model, version: 1, outputs: [int32('OUT', doubled)] };
      },
    });
    try {
      const [r1, r2] = (await inst.execute([req('1', 'bls:double'), req('2', 'bls:missing')], never)).results;
      expect(ints(ok(r1).outputs[0])).toEqual([2, 4, 6]);
      expect(r2).toMatchObject({ code: 'NOT_FOUND', message: "Request for unknown model: 'missing' is not found" });
      expect(seen).toEqual(['double:1/bls', 'missing:2/bls']);
    } finally {
      await inst.dispose();
    }
  });

  it('a BLS call carries its execute’s callers and is cancelled with it (and when it ends)', async () => {
    const calls: InferRequest[] = [];
    const inst = await spawn('c_0_0', {
      // The callee never answers by itself: only cancellation ends the call.
      infer: (request) =>
        new Promise((_resolve, reject) => {
          calls.push(request);
          request.signal?.addEventListener('abort', () => reject(new InferError('CANCELLED', 'request cancelled')), { once: true });
        }),
    });
    try {
      const callers: CallFrame[] = [{ model: 'outer', id: -1 }, { model: 'm', id: -2 }];
      const client = new AbortController();
      const running = inst.execute([req('1', 'bls:callee')], client.signal, { callers });
      await vi.waitFor(() => expect(calls).toHaveLength(1), { timeout: 10_000 });
      expect(calls[0]!.callers).toBe(callers);
      expect(calls[0]!.signal?.aborted).toBe(false);
      client.abort();
      const [r] = (await running).results;
      expect(r).toMatchObject({ code: 'CANCELLED' });
      expect(calls[0]!.signal?.aborted).toBe(true);
    } finally {
      await inst.dispose();
    }
  });

  it('fails BLS with UNSUPPORTED when no infer is wired', async () => {
    const inst = await spawn('n_0_0');
    try {
      const [r] = (await inst.execute([req('1', 'bls:x')], never)).results;
      expect(r).toMatchObject({ code: 'UNSUPPORTED' });
    } finally {
      await inst.dispose();
    }
  });

  it('streams decoupled responses to each request’s sink', async () => {
    const logs: string[] = [];
    const inst = await spawnWorkerInstance({
      entry: TEST_ENTRIES.decoupled,
      init: null,
      model: 'd',
      instanceName: 'd_0_0',
      log: { error: () => {}, warn: () => {}, info: (m) => logs.push(m), verbose: () => {} },
    });
    try {
      const got: string[][] = [[], []];
      const sinks: ResponseSink[] = got.map((g) => ({
        response: (r) => void g.push(String(ints(r.outputs[0])[0])),
        complete: (e) => g.push(e ? `error:${e.code}` : 'done'),
      }));
      await inst.executeDecoupled!(
        [
          { id: 'a', model: 'd', inputs: [], parameters: { count: 3 } },
          { id: 'b', model: 'd', inputs: [], parameters: { count: -1 } },
        ],
        sinks,
        never,
      );
      expect(got).toEqual([['0', '1', '2', 'done'], ['error:INVALID_ARG']]);
      expect(logs).toContain('decoupled batch of 2');
    } finally {
      await inst.dispose();
    }
  });
});
