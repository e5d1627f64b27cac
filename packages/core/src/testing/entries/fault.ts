/**
 * Worker entry of the `fault` test backend: echoes like `identity`, but each request may ask for a
 * fault through its `fault` parameter or a BYTES input named `FAULT`:
 * `ok` · `fail` (InferError for that request only) · `reject` (execute rejects: the whole batch fails,
 * the worker lives) · `throw` (uncaught exception: the worker crashes) · `exit` (process.exit(3)) ·
 * `hang` (busy loop until the execute timeout kills the worker) · `never` (never resolves, ignores
 * cancellation, idle) · `oom` (allocates until the heap
 * limit) · `delay:<ms>` (then ok; aborting the execute cancels it) · `read:<path>` (reads a file and
 * returns its bytes as OUTPUT0; a denied read fails that request) · `bls:<model>` (forwards the
 * request's inputs to another model through ctx.infer and returns its outputs) · `forge:<what>`
 * (posts a forged protocol message to the host, as any model's code can, then never returns; see
 * FORGED below) · `forge-shared:<id>` (a result in shared memory, rewritten after the host checked it).
 * Sandbox attacks, each answering OUTPUT0 = UTF-8 text saying what happened: `kill:<pid>|ppid|group|-1`
 * (SIGKILL to a pid, the parent, the own process group, or everything it may signal (-1, only
 * inside a PID namespace): `sent` or the error code) · `env` (the
 * environment as JSON) · `connect:<host>:<port>` (a TCP connection: `connected` or the error code)
 * · `alloc:<MiB>` (ArrayBuffers of 16 MiB, touched, until MiB are held: `allocated N MiB` or
 * `failed after N MiB: <error>`) · `engine` and `output:<what>` (see sandbox-attacks.ts) · `log:<n>:<text>`
 * (logs <text> n times through ctx.log, then ok). Config parameter `fault_on_start: "fail-while:<path>"` makes
 * createInstance fail while that file exists (a crash loop on restart).
 */
import { existsSync, readFileSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { parentPort } from 'node:worker_threads';
import { InferError } from '../../errors.ts';
import { decodeStrings } from '../../tensor/bytes-elements.ts';
import type { InferRequest } from '../../types.ts';
import type { CreateWorkerInstance, WorkerContext, WorkerModelInstance } from '../../worker/types.ts';
import { BRAND } from '../../worker/protocol.ts';
import { CHILD_CHANNEL_FD, encodeFrame } from '../../worker/frames.ts';
import { identityOutputs, perRequest, respond, type TestModelInit } from './common.ts';
import { engineDoors, outputAttack } from './sandbox-attacks.ts';

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

/**
 * Messages a model's own code could post to the host with our brand, each malformed in one way. The
 * execute ids are guessed (0..63), as an attacker would; `id` is filled in per message.
 */
export const FORGED: Readonly<Record<string, (id: number) => unknown>> = {
  'packed-json': (id) => ({ t: 'result', id, packed: { json: '{', buffer: new ArrayBuffer(8), tableLength: 1, large: [] } }),
  'result-null': (id) => ({ t: 'result', id, results: [null] }),
  'result-count': (id) => ({ t: 'result', id, results: [] }),
  'shape-lie': (id) => ({
    t: 'result',
    id,
    results: [{ ok: true, response: { id: '1', model: 'p', version: 1, outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1_000_000_000], data: new Uint8Array(4) }] } }],
  }),
  'bytes-lie': (id) => ({
    t: 'result',
    id,
    results: [{ ok: true, response: { id: '1', model: 'p', version: 1, outputs: [{ name: 'OUTPUT0', datatype: 'BYTES', shape: [1], data: Uint8Array.of(255, 255, 255, 255) }] } }],
  }),
  'error-null': (id) => ({ t: 'result', id, error: null }),
  // One response for the whole batch (WholeBatchOutput) whose rows do not add up to the batch's, or two of them.
  'whole-rows': (id) => ({
    t: 'result',
    id,
    whole: true,
    results: [{ ok: true, response: { id: '', model: 'p', version: 1, outputs: [{ name: 'OUTPUT0', datatype: 'UINT8', shape: [5], data: new Uint8Array(5) }] } }],
  }),
  'whole-count': (id) => ({
    t: 'result',
    id,
    whole: true,
    results: [1, 2].map(() => ({ ok: true, response: { id: '', model: 'p', version: 1, outputs: [] } })),
  }),
  'bls-null': () => ({ t: 'bls', call: 1, request: null, stream: false }),
  'log-level': () => ({ t: 'log', level: 'constructor', message: 'x' }),
  'fatal-null': () => ({ t: 'fatal', error: null }),
};

/**
 * `forge-shared:<id>` (threads): a result for execute `id` whose BYTES output lies in a
 * SharedArrayBuffer, valid when posted; when the next message from the host arrives, the worker rewrites its length prefix to
 * 0xFFFFFFFF, as a hostile model would once the host has checked it.
 */
function forgeShared(id: number): Promise<never> {
  const bytes = new Uint8Array(new SharedArrayBuffer(8));
  bytes.set([4, 0, 0, 0, 0x6f, 0x6b, 0x21, 0x21]); // one element, 'ok!!'
  parentPort?.once('message', () => bytes.set([0xff, 0xff, 0xff, 0xff], 0));
  const output = { name: 'OUTPUT0', datatype: 'BYTES', shape: [1], data: bytes };
  parentPort?.postMessage({ brand: BRAND, t: 'result', id, results: [{ ok: true, response: { id: '1', model: 'p', version: 1, outputs: [output] } }] });
  return new Promise<never>(() => {});
}

/** `forge:<what>` guesses execute ids 0..63; `forge:<what>:<id>` sends one message, for that id. */
function forge(arg: string): Promise<never> {
  const [what = '', only] = arg.split(':');
  const make = FORGED[what];
  if (!make) throw new InferError('INVALID_ARG', `fault backend: unknown forgery '${what}'`);
  const ids = only === undefined ? Array.from({ length: 64 }, (_, i) => i) : [Number(only)];
  for (const id of ids) {
    const msg = { brand: BRAND, ...(make(id) as object) };
    if (parentPort) parentPort.postMessage(msg);
    // A child's channel is its inherited fd: any code in it can write a frame (or any bytes) there.
    else writeSync(CHILD_CHANNEL_FD, encodeFrame(msg));
  }
  return new Promise<never>(() => {});
}

/** `kill:<pid|ppid|group>`: sends SIGKILL and says what came of it (`sent` or the error code). */
function killProbe(arg: string): string {
  const pid = arg === 'ppid' ? process.ppid : arg === 'group' ? 0 : Number(arg);
  // kill(-1) reaches every process this uid may signal: only ever tried from inside a fresh
  // PID namespace (node is pid 2 there, under the sandbox's init), never on a host.
  if (pid === -1 && process.pid > 2) return 'refused: not inside a PID namespace';
  try {
    process.kill(pid, 'SIGKILL');
    return 'sent';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

/** `connect:<host>:<port>`: opens a TCP connection and says what came of it (`connected` or the error code). */
function connectProbe(arg: string): Promise<string> {
  const at = arg.lastIndexOf(':');
  return new Promise<string>((resolve) => {
    const socket = connect({ host: arg.slice(0, at), port: Number(arg.slice(at + 1)) });
    socket.setTimeout(10_000, () => (socket.destroy(), resolve('ETIMEDOUT')));
    socket.once('connect', () => (socket.destroy(), resolve('connected')));
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** `alloc:<MiB>`: allocates and touches that much in 16 MiB blocks, then lets it go; says how far it got. */
function allocProbe(mib: number): string {
  const held: ArrayBuffer[] = [];
  let outcome: string;
  try {
    while (held.length * 16 < mib) {
      const block = new ArrayBuffer(16 << 20);
      new Uint8Array(block).fill(1);
      held.push(block);
    }
    outcome = `allocated ${held.length * 16} MiB`;
  } catch (error) {
    outcome = `failed after ${held.length * 16} MiB: ${String(error)}`;
  }
  held.length = 0;
  return outcome;
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
    case 'never':
      // An execute that never returns and ignores cancellation, without burning a core.
      return new Promise<never>(() => {});
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
    case 'kill':
      return text(init, request, killProbe(arg));
    case 'env':
      return text(init, request, JSON.stringify(process.env));
    case 'connect':
      return text(init, request, await connectProbe(arg));
    case 'alloc':
      return text(init, request, allocProbe(Number(arg)));
    case 'engine':
      return text(init, request, await engineDoors());
    case 'output':
      return text(init, request, outputAttack(arg));
    case 'log':
      // `log:<n>:<text>`: the model logs <text> n times through ctx.log.
      for (let i = 0; i < Number(arg.slice(0, arg.indexOf(':'))); i++) ctx.log.info(arg.slice(arg.indexOf(':') + 1));
      break;
    case 'forge':
      return forge(arg);
    case 'forge-shared':
      return forgeShared(Number(arg));
    case 'bls': {
      const response = await ctx.infer({ id: `${request.id}/bls`, model: arg, inputs: request.inputs.filter((i) => i.name !== 'FAULT') });
      return respond(init, request, response.outputs);
    }
    default:
      throw new InferError('INVALID_ARG', `fault backend: unknown fault '${fault}'`);
  }
  return respond(init, request, identityOutputs(init, request));
}

function text(init: TestModelInit, request: InferRequest, value: string) {
  const bytes = new TextEncoder().encode(value);
  return respond(init, request, [{ name: init.outputs[0] ?? 'OUTPUT0', datatype: 'UINT8', shape: [bytes.byteLength], data: bytes }]);
}

const instance = (init: TestModelInit, ctx: WorkerContext): WorkerModelInstance => ({
  async execute(batch, { signal }) {
    if (batch.some((r) => faultOf(r) === 'reject')) throw new Error('fault backend: execute rejected on purpose');
    return perRequest(batch, (r) => run(init, ctx, r, signal));
  },
});

export const createInstance: CreateWorkerInstance<TestModelInit> = async (init, ctx) => {
  // Config parameter `fault_on_start: "fail-while:<path>"`: createInstance fails while that file
  // exists (a model that crashes on every restart until someone fixes it).
  const onStart = init.parameters?.['fault_on_start'] ?? '';
  if (onStart.startsWith('fail-while:') && existsSync(onStart.slice('fail-while:'.length))) {
    throw new InferError('INTERNAL', `fault backend: createInstance fails while ${onStart.slice('fail-while:'.length)} exists`);
  }
  return instance(init, ctx);
};
