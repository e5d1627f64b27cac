/**
 * A model's code can post messages to the host itself (`process.send` in a sandboxed child,
 * `parentPort` in a thread), with our brand. A forged message the host cannot use ends that worker
 * as a crash (its execute fails INTERNAL naming the message, the instance restarts), never the host:
 * a `result` whose packed JSON did not parse used to throw in the channel's handler and end the
 * whole server (an uncaught exception here fails this file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import type { WorkerInstance } from '../../src/worker/types.ts';
import { TEST_ENTRIES, type TestModelInit } from '../../src/testing/index.ts';
import { FORGED } from '../../src/testing/entries/fault.ts';
import type { InferRequest, InferResponse } from '../../src/types.ts';

const never = new AbortController().signal;

function req(fault: string): InferRequest {
  return { id: '1', model: 'p', inputs: [{ name: 'INPUT0', datatype: 'UINT8', shape: [1], data: new Uint8Array([9]) }], parameters: { fault } };
}

const EXPECTED: Record<string, string> = {
  'packed-json': "malformed 'result' message: result: packed results do not decode",
  'result-null': "malformed 'result' message: result 0: must be an object, got null",
  'result-count': "malformed 'result' message: result: 0 results for a batch of 1 requests",
  'shape-lie': "tensor 'OUTPUT0': 4 bytes for INT32 shape [1000000000] (4000000000 expected)",
  'bytes-lie': "tensor 'OUTPUT0': a BYTES element runs past the end (4 bytes)",
  'error-null': "malformed 'result' message: result: an error must be an object, got null",
  'bls-null': "malformed 'bls' message: bls: a request must be an object with inputs, got null",
  'log-level': "malformed 'log' message: log: unknown level \"constructor\"",
  'fatal-null': "malformed 'fatal' message: fatal: an error must be an object, got null",
};

for (const isolation of ['thread', 'process'] as const) {
  describe(`forged worker messages (${isolation})`, () => {
    let inst: WorkerInstance;
    beforeAll(async () => {
      inst = await spawnWorkerInstance<TestModelInit>({
        entry: TEST_ENTRIES.fault,
        init: { model: 'p', version: 1, inputs: ['INPUT0'], outputs: ['OUTPUT0'] },
        model: 'p',
        instanceName: 'p_0_0',
        isolation,
        restart: { initialBackoffMs: 5, maxBackoffMs: 5, maxRestarts: 100 },
      });
    });
    afterAll(async () => {
      await inst?.dispose();
    });

    // Every forgery in a thread; the ones whose handling differs per channel in a process too.
    const kinds = isolation === 'thread' ? Object.keys(FORGED) : ['packed-json', 'shape-lie', 'fatal-null'];
    for (const kind of kinds) {
      it(`${kind}: the execute fails naming the message, and the instance serves again`, async () => {
        const error = await inst.execute([req(`forge:${kind}`)], never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(InferError.is(error)).toBe(true);
        expect((error as InferError).code).toBe('INTERNAL');
        expect((error as InferError).message).toContain('crashed: worker sent a malformed');
        expect((error as InferError).message).toContain(EXPECTED[kind]);
        const { results } = await inst.execute([req('ok')], never);
        expect(((results[0] as InferResponse).outputs[0]!.data)).toEqual(new Uint8Array([9]));
      });
    }
  });
}

it('every forgery has its expected message', () => {
  expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(FORGED).sort());
});
