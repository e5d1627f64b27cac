/**
 * A model's code can post messages to the host itself (a frame written to its channel's fd in a sandboxed child,
 * `parentPort` in a thread), with our brand. A forged message the host cannot use ends that worker
 * as a crash (its execute fails INTERNAL naming the message, the instance restarts), never the host:
 * a throw in the channel's handler (a `result` whose packed JSON does not parse, say) would end the
 * whole server (an uncaught exception here fails this file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { decodeStrings } from '../../src/tensor/bytes-elements.ts';
import { checkWireTensor } from '../../src/worker/wire-check.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import type { WorkerInstance } from '../../src/worker/types.ts';
import { TEST_ENTRIES, type TestModelInit } from '../../src/testing/index.ts';
import { FORGED } from '../../src/testing/entries/fault.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../../src/types.ts';

const never = new AbortController().signal;

function req(fault: string): InferRequest {
  return { id: '1', model: 'p', inputs: [{ name: 'INPUT0', datatype: 'UINT8', shape: [1], data: new Uint8Array([9]) }], parameters: { fault } };
}

/** What each forgery gets: `crash` ends the worker (the message as a whole is unusable); otherwise only that request fails. */
const EXPECTED: Record<string, { crash: boolean; message: string }> = {
  'packed-json': { crash: true, message: "crashed: worker sent a malformed 'result' message: result: packed results do not decode: Expected property name" },
  'result-count': { crash: true, message: "crashed: worker sent a malformed 'result' message: result: 0 results for a batch of 1 requests" },
  'whole-count': { crash: true, message: "crashed: worker sent a malformed 'result' message: result: 2 whole-batch responses (1 expected)" },
  'error-null': { crash: true, message: "crashed: worker sent a malformed 'result' message: result: an error must be an object, got null" },
  'bls-null': { crash: true, message: "crashed: worker sent a malformed 'bls' message: bls: a request must be an object with inputs, got null" },
  'log-level': { crash: true, message: "crashed: worker sent a malformed 'log' message: log: unknown level \"constructor\"" },
  'fatal-null': { crash: true, message: "crashed: worker sent a malformed 'fatal' message: fatal: an error must be an object, got null" },
  'result-null': { crash: false, message: "instance 'p_0_0' sent a malformed response: result 0: must be an object, got null" },
  'shape-lie': { crash: false, message: "sent a malformed response: result 0 output 0: tensor 'OUTPUT0': 4 bytes for INT32 shape [1000000000] (4000000000 expected)" },
  'whole-rows': {
    crash: false,
    message: "instance 'p_0_0' sent a malformed response: whole-batch result: output 'OUTPUT0' has shape [5], expected 1 rows to split across 1 requests",
  },
  'bytes-lie': { crash: false, message: "sent a malformed response: result 0 output 0: tensor 'OUTPUT0': a BYTES element runs past the end (4 bytes)" },
};

function spawn(isolation: 'thread' | 'process'): Promise<WorkerInstance> {
  return spawnWorkerInstance<TestModelInit>({
    entry: TEST_ENTRIES.fault,
    init: { model: 'p', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
    model: 'p',
    instanceName: 'p_0_0',
    isolation,
    restart: { initialBackoffMs: 5, maxBackoffMs: 5, maxRestarts: 100 },
  });
}

async function failureOf(inst: WorkerInstance, fault: string): Promise<InferError> {
  const error = await inst.execute([req(fault)], never).then(
    ({ results }) => results[0],
    (e: unknown) => e,
  );
  expect(InferError.is(error)).toBe(true);
  expect((error as InferError).code).toBe('INTERNAL');
  return error as InferError;
}

async function servesAgain(inst: WorkerInstance): Promise<void> {
  const { results } = await inst.execute([req('ok')], never);
  expect((results[0] as InferResponse).outputs[0]!.data).toEqual(new Uint8Array([9]));
}

for (const isolation of ['thread', 'process'] as const) {
  describe(`forged worker messages (${isolation})`, () => {
    let inst: WorkerInstance;
    beforeAll(async () => {
      inst = await spawn(isolation);
    });
    afterAll(async () => {
      await inst?.dispose();
    });

    // Every forgery in a thread; in a process, one of each outcome and the process channel's own path (fatal).
    const kinds = isolation === 'thread' ? Object.keys(FORGED) : ['packed-json', 'shape-lie', 'fatal-null'];
    for (const kind of kinds.filter((k) => EXPECTED[k]!.crash)) {
      it(`${kind}: the execute fails naming the message, the worker is replaced, and the instance serves again`, async () => {
        const restarts = inst.restarts;
        expect((await failureOf(inst, `forge:${kind}`)).message).toContain(EXPECTED[kind]!.message);
        await servesAgain(inst);
        expect(inst.restarts).toBe(restarts + 1);
      });
    }
    for (const kind of kinds.filter((k) => !EXPECTED[k]!.crash)) {
      it(`${kind}: that request fails naming what is wrong; the worker lives on`, async () => {
        // A fresh instance, whose first execute is id 1: the forged result answers exactly it (a guessed
        // range would also answer the executes after it, which is the model's own business).
        const own = await spawn(isolation);
        try {
          expect((await failureOf(own, `forge:${kind}:1`)).message).toContain(EXPECTED[kind]!.message);
          await servesAgain(own);
          expect(own.restarts).toBe(0);
        } finally {
          await own.dispose();
        }
      });
    }
  });
}

it("a streamed response whose shape disagrees with its bytes ends that request's stream alone, naming why", async () => {
  const inst = await spawnWorkerInstance({ entry: TEST_ENTRIES.decoupled, init: null, model: 'd', instanceName: 'd_0_0' });
  try {
    const got: string[][] = [[], []];
    const sinks: ResponseSink[] = got.map((g) => ({
      response: (r) => void g.push(String(new Int32Array(r.outputs[0]!.data.slice().buffer)[0])),
      complete: (e) => g.push(e ? `error:${e.code}:${e.message}` : 'done'),
    }));
    await inst.executeDecoupled!(
      [
        { id: 'a', model: 'd', inputs: [], parameters: { count: 3, bad_at: 1 } },
        { id: 'b', model: 'd', inputs: [], parameters: { count: 2 } },
      ],
      sinks,
      never,
    );
    expect(got[0]).toEqual([
      '0',
      "error:INTERNAL:model 'd' instance 'd_0_0' sent a malformed response: response for request 0 output 0: tensor 'OUTPUT0': 4 bytes for INT32 shape [1000] (4000 expected)",
    ]);
    expect(got[1]).toEqual(['0', '1', 'done']);
    expect(inst.restarts).toBe(0);
    expect(inst.healthy).toBe(true);
  } finally {
    await inst.dispose();
  }
});

it('a response in shared memory is copied as it arrives: the worker cannot rewrite bytes the host checked (thread)', async () => {
  const inst = await spawn('thread');
  try {
    // A fresh instance's first execute is id 1.
    const { results } = await inst.execute([req('forge-shared:1')], never);
    const out = (results[0] as InferResponse).outputs[0]!;
    // The worker rewrites its shared bytes when this execute reaches it; the host's copy stays as checked.
    await servesAgain(inst);
    expect(out.data.buffer).toBeInstanceOf(ArrayBuffer);
    expect(() => checkWireTensor(out, 'served')).not.toThrow();
    expect(decodeStrings(out.data, 'OUTPUT0')).toEqual(['ok!!']);
  } finally {
    await inst.dispose();
  }
});

it('every forgery has its expected message', () => {
  expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(FORGED).sort());
});
