/**
 * Worker entry of the `fault` test backend: echoes like `identity`, but each request may ask for a
 * fault through its `fault` parameter or a BYTES input named `FAULT`:
 * `ok` · `fail` (InferError for that request only) · `reject` (execute rejects: the whole batch fails,
 * the worker lives) · `throw` (uncaught exception: the worker crashes) · `exit` (process.exit(3)) ·
 * `hang` (busy loop until the execute timeout kills the worker) · `oom` (allocates until the heap
 * limit) · `delay:<ms>` (then ok; aborting the execute cancels it) · `read:<path>` (reads a file and
 * returns its bytes as OUTPUT0; a denied read fails that request) · `bls:<model>` (forwards the
 * request's inputs to another model through ctx.infer and returns its outputs).
 */
import { readFileSync } from 'node:fs';
import { InferError } from '../../errors.ts';
import { decodeStrings } from '../../tensor/tensor.ts';
import type { InferRequest } from '../../types.ts';
import type { CreateWorkerInstance, WorkerContext } from '../../worker/types.ts';
import { identityOutputs, perRequest, respond, type TestModelInit } from './common.ts';

function faultOf(request: InferRequest): string {
  const p = request.parameters?.['fault'];
  if (typeof p === 'string') return p;
  const input = request.inputs.find((i) => i.name === 'FAULT');
  if (input && input.datatype === 'BYTES') return decodeStrings(input.data, 'FAULT')[0] ?? 'ok';
  return 'ok';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new InferError('CANCELLED', 'request cancelled'));
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(new InferError('CANCELLED', 'request cancelled'))), {
      once: true,
    });
  });
}

/** Kept reachable so the allocations of `oom` cannot be collected. */
const hoard: unknown[] = [];

async function run(init: TestModelInit, ctx: WorkerContext, request: InferRequest, signal: AbortSignal) {
  const fault = faultOf(request);
  const [kind, arg = ''] = fault.includes(':') ? [fault.slice(0, fault.indexOf(':')), fault.slice(fault.indexOf(':') + 1)] : [fault];
  switch (kind) {
    case 'ok':
      break;
    case 'fail':
      throw new InferError('INVALID_ARG', `fault backend: request '${request.id}' failed on purpose`);
    case 'throw':
      // Thrown outside the execute promise chain: an uncaught exception that kills the worker.
      setImmediate(() => {
        throw new Error('fault backend: uncaught throw on purpose');
      });
      return new Promise<never>(() => {});
    case 'exit':
      process.exit(3);
      break;
    case 'hang':
      for (;;) {
        // Busy forever: only the host's execute timeout (terminate) ends this.
      }
    case 'oom':
      for (;;) hoard.push(new Array(100_000).fill({ x: hoard.length }));
    case 'delay':
      await sleep(Number(arg) || 0, signal);
      break;
    case 'read': {
      let bytes: Buffer;
      try {
        bytes = readFileSync(arg);
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        throw new InferError('INTERNAL', `fault backend: cannot read '${arg}': ${e.code ?? ''} ${e.message}`.trim());
      }
      return respond(init, request, [
        { name: init.outputs[0] ?? 'OUTPUT0', datatype: 'UINT8', shape: [bytes.byteLength], data: new Uint8Array(bytes) },
      ]);
    }
    case 'bls': {
      const response = await ctx.infer({ id: `${request.id}/bls`, model: arg, inputs: request.inputs.filter((i) => i.name !== 'FAULT') });
      return respond(init, request, response.outputs);
    }
    default:
      throw new InferError('INVALID_ARG', `fault backend: unknown fault '${fault}'`);
  }
  return respond(init, request, identityOutputs(init, request));
}

export const createInstance: CreateWorkerInstance<TestModelInit> = async (init, ctx) => ({
  async execute(batch, { signal }) {
    if (batch.some((r) => faultOf(r) === 'reject')) throw new Error('fault backend: execute rejected on purpose');
    return perRequest(batch, (r) => run(init, ctx, r, signal));
  },
});
