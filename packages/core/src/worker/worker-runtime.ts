/**
 * Runs INSIDE a worker thread or child process (compiled; the host starts it): waits for `init`,
 * imports the entry, calls its `createInstance(init, ctx)`, then serves execute/abort/dispose and
 * relays BLS calls and log lines to the host. One instance per worker.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { lockDownRuntime } from './runtime-lockdown.ts';
import { CallScope } from './call-scope.ts';
import { parentPort } from 'node:worker_threads';
import { Socket } from 'node:net';
import { CHILD_CHANNEL_FD, encodeFrame, FrameReader, MAX_FRAME_BYTES } from './frames.ts';
import { SEND_CANCELLED_MESSAGE, WorkerSinkFlow } from './sink-flow.ts';
import { pollReadiness } from './readiness-poll.ts';
import { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import type { ExecuteOutput, ExecuteTimings } from '../backend/spi.ts';
import {
  BRAND,
  isProtocolMessage,
  normalizeTensor,
  prepareRequest,
  prepareResponse,
  toWireError,
  packResults,
  unpackRequests,
  type FromWorkerBody,
  type InitPayload,
  type ToWorker,
  type WireRequest,
  type WireResult,
} from './protocol.ts';
import type { CreateWorkerInstance, WholeBatchOutput, WorkerContext, WorkerExecuteContext, WorkerModelInstance } from './types.ts';

// Before anything else runs here, and long before the entry (the model's code) is imported.
lockDownRuntime();

type Send = (msg: FromWorkerBody, transfer?: ArrayBuffer[]) => void;

function makeSend(): { send: Send; canTransfer: boolean; onMessage(fn: (m: unknown) => void): void; last(msg: FromWorkerBody): void } {
  if (parentPort) {
    const port = parentPort;
    return {
      send: (msg, transfer) => port.postMessage({ brand: BRAND, ...msg }, transfer ?? []),
      canTransfer: true,
      onMessage: (fn) => port.on('message', fn),
      last: (msg) => port.postMessage({ brand: BRAND, ...msg }),
    };
  }
  // A child process: its host's channel is the socket on fd 3, framed (frames.ts).
  const socket = new Socket({ fd: CHILD_CHANNEL_FD, readable: true, writable: true });
  // A host that went away must not leave its child lingering.
  socket.on('close', () => process.exit(0));
  socket.on('error', () => {});
  return {
    send: (msg) => {
      socket.write(encodeFrame({ brand: BRAND, ...msg }));
    },
    canTransfer: false,
    onMessage: (fn) => {
      const reader = new FrameReader(MAX_FRAME_BYTES, fn, () => process.exit(1));
      socket.on('data', (chunk: Buffer) => reader.push(chunk));
    },
    // Written before the process exits: exits once the bytes are out (or cannot go).
    last: (msg) => socket.write(encodeFrame({ brand: BRAND, ...msg }), () => process.exit(1)),
  };
}

const channel = makeSend();
const { send } = channel;

function fromWire(request: WireRequest, signal?: AbortSignal): InferRequest {
  const inputs = request.inputs.map(normalizeTensor);
  return signal ? { ...request, inputs, signal } : { ...request, inputs };
}

const log: Logger = {
  error: (message) => send({ t: 'log', level: 'error', message }),
  warn: (message) => send({ t: 'log', level: 'warn', message }),
  info: (message) => send({ t: 'log', level: 'info', message }),
  verbose: (verbosity, message) => send({ t: 'log', level: 'verbose', message, verbosity }),
};

let nextCall = 1;
const metricCalls = new Map<number, { resolve: (value: number) => void; reject: (e: InferError) => void }>();
const blsCalls = new Map<number, { resolve?: (r: InferResponse) => void; reject?: (e: InferError) => void; sink?: ResponseSink }>();

/**
 * The execute each piece of worker code runs on behalf of, followed across awaits and timers, so a
 * BLS call names its parent execute: the host gives the call that execute's cancellation and
 * callers (cycle detection), whatever the user code awaited in between.
 */
const currentExecute = new AsyncLocalStorage<number>();

function sendBls(request: WireRequest, stream: boolean): number {
  const call = nextCall++;
  const transfer: ArrayBuffer[] = [];
  const parent = currentExecute.getStore();
  // Worker-side BLS inputs may still be used by the caller (e.g. fed to a second call): copy, don't detach.
  send({ t: 'bls', call, stream, parent, request: prepareRequest(request, channel.canTransfer ? transfer : undefined, false) }, transfer);
  return call;
}

function makeContext(payload: InitPayload): WorkerContext {
  return {
    model: payload.model,
    instanceName: payload.instanceName,
    log,
    infer(request) {
      return new Promise((resolve, reject) => {
        const call = sendBls(request, false);
        blsCalls.set(call, { resolve, reject });
      });
    },
    inferStream(request, sink) {
      const call = sendBls(request, true);
      blsCalls.set(call, { sink });
      return {
        cancel: () => {
          if (blsCalls.has(call)) send({ t: 'bls-cancel', call });
        },
      };
    },
    metric(op) {
      send({ t: 'metric', op });
    },
    metricValue(op) {
      return new Promise((resolve, reject) => {
        const call = nextCall++;
        metricCalls.set(call, { resolve, reject });
        send({ t: 'metric', op, call });
      });
    },
  };
}

let instance: WorkerModelInstance | undefined;
/** Why an execute's signal aborts: the host cancelled it. */
const CANCELLED = new InferError('CANCELLED', 'execute cancelled');
/**
 * The cancellation of each execute in progress, by id. A decoupled execute's entry stays until its
 * last sink completes: its responses may keep coming after the call returned (Triton's response
 * factory outliving the execute, as its repeat backend does), and a cancel must still reach them.
 */
const running = new Map<number, CallScope>();
/** Decoupled executes: sinks not completed yet, by id. */
const openSinks = new Map<number, number>();
/** Decoupled executes whose call returned while sinks were still open. */
const returnedOpen = new Set<number>();

/** One sink of execute `id` completed: the last one releases the execute's cancellation. */
function sinkCompleted(id: number): void {
  const left = (openSinks.get(id) ?? 0) - 1;
  if (left > 0) {
    openSinks.set(id, left);
    return;
  }
  openSinks.delete(id);
  flows.delete(id);
  if (returnedOpen.delete(id)) running.delete(id);
}

/** The timings an entry reported, as plain finite numbers (anything else is dropped, never sent). */
function plainTimings(t: ExecuteTimings | void | undefined): ExecuteTimings | undefined {
  if (!t || typeof t !== 'object') return undefined;
  const out: { computeInputNs?: number; computeInferNs?: number; computeOutputNs?: number } = {};
  for (const k of ['computeInputNs', 'computeInferNs', 'computeOutputNs'] as const) {
    const v = (t as Record<string, unknown>)[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function sendResults(id: number, output: ((ExecuteOutput & { readonly whole?: undefined }) | WholeBatchOutput) & { readonly keepOutputs?: boolean } | undefined, batchSize: number): void {
  const timings = plainTimings(output?.timings);
  let wire: WireResult[];
  const whole = output?.whole;
  if (whole !== undefined) {
    if (typeof whole !== 'object' || whole === null || !Array.isArray((whole as { outputs?: unknown }).outputs)) {
      send({ t: 'result', id, error: { code: 'INTERNAL', message: 'execute returned an invalid whole-batch response (expected { whole: { id, model, version, outputs } })' } });
      return;
    }
    wire = [{ ok: true, response: whole }];
  } else {
    const results = (output as ExecuteOutput | undefined)?.results;
    if (!Array.isArray(results) || results.length !== batchSize) {
      const got = Array.isArray(results) ? `${results.length} results` : Array.isArray(output) ? 'a bare array (expected { results })' : `a ${typeof results}`;
      send({ t: 'result', id, error: { code: 'INTERNAL', message: `execute returned ${got} for a batch of ${batchSize} requests` } });
      return;
    }
    wire = results.map((r, i): WireResult => {
      if (InferError.is(r) || r instanceof Error) return { ok: false, error: toWireError(r) };
      if (typeof r !== 'object' || r === null || !Array.isArray((r as { outputs?: unknown }).outputs)) {
        return { ok: false, error: { code: 'INTERNAL', message: `execute returned an invalid result for request ${i} (expected a response with outputs or an InferError)` } };
      }
      return { ok: true, response: r };
    });
  }
  const transfer: ArrayBuffer[] = [];
  const wholeFlag = whole !== undefined ? { whole: true } : {};
  // The entry keeps its arrays: copy what would be transferred (see WorkerExecuteOutput).
  const keep = output?.keepOutputs === true;
  const packed = packResults(wire, channel.canTransfer ? transfer : undefined, keep);
  if (packed) {
    send({ t: 'result', id, packed, timings, ...wholeFlag }, transfer);
    return;
  }
  const prepared = wire.map((w) => (w.ok ? { ok: true as const, response: prepareResponse(w.response, channel.canTransfer ? transfer : undefined, !keep) } : w));
  send({ t: 'result', id, results: prepared, timings, ...wholeFlag }, transfer);
}

/** Decoupled executes: the flow control of each request's stream (sink-flow.ts), by execute id. */
const flows = new Map<number, WorkerSinkFlow[]>();
/** Why a response held for the window fails once its execute is cancelled. */
const STREAM_CANCELLED = new InferError('CANCELLED', SEND_CANCELLED_MESSAGE);

/**
 * The sink of request `index` of decoupled execute `id`. Its `response` returns a promise while the
 * response waits for the stream's window (the client reads slower than the model sends): the model's
 * sender waits on it. A completion waits for the responses held before it, so none is overtaken.
 */
function sinkFor(id: number, index: number, own: WorkerSinkFlow[]): ResponseSink {
  let done = false;
  const flow = new WorkerSinkFlow((response) => {
    const transfer: ArrayBuffer[] = [];
    send({ t: 'sink', id, index, response: prepareResponse(response, channel.canTransfer ? transfer : undefined, true) }, transfer);
  });
  own[index] = flow;
  return {
    response(response) {
      if (done) return;
      return flow.response(response);
    },
    complete(error) {
      if (done) return;
      done = true;
      flow.whenSent(() => {
        send({ t: 'sink', id, index, done: true, error: error ? toWireError(error) : undefined });
        sinkCompleted(id);
      });
    },
  };
}

async function runExecute(msg: Extract<ToWorker, { t: 'execute' }>): Promise<void> {
  const { id, decoupled } = msg;
  // The execute's signal is made only if its code reads it (see CallScope), and the scope itself is
  // the execute's context (its `signal` getter lives on the class): an object literal with a getter
  // would get a new hidden class per execute, and the chain of those classes kept every execute's
  // objects alive through young-generation GCs (promoted, then freed only by full GCs).
  const scope = new CallScope(CANCELLED);
  running.set(id, scope);
  const xctx: WorkerExecuteContext = scope;
  const batch = msg.packed ? unpackRequests(msg.packed) : (msg.batch ?? []).map((r) => fromWire(r));
  if (decoupled && batch.length > 0) openSinks.set(id, batch.length);
  let failed = false;
  try {
    if (!instance) throw new InferError('INTERNAL', 'instance is not initialized');
    if (decoupled) {
      if (!instance.executeDecoupled) throw new InferError('UNSUPPORTED', 'instance does not implement executeDecoupled');
      const executeDecoupled = instance.executeDecoupled.bind(instance);
      const own: WorkerSinkFlow[] = [];
      if (batch.length > 0) flows.set(id, own);
      const sinks = batch.map((_, i) => sinkFor(id, i, own));
      const timings = await currentExecute.run(id, () => executeDecoupled(batch, sinks, xctx));
      send({ t: 'result', id, results: [], timings: plainTimings(timings) });
    } else {
      const model = instance;
      sendResults(id, await currentExecute.run(id, () => model.execute(batch, xctx)), batch.length);
    }
  } catch (error) {
    failed = true;
    send({ t: 'result', id, error: toWireError(error) });
  } finally {
    // A failed call fails every request of its batch on the host: nothing of it is left to cancel.
    if (failed) {
      openSinks.delete(id);
      flows.delete(id);
    }
    if (openSinks.has(id)) returnedOpen.add(id);
    else running.delete(id);
  }
}

async function initialize(payload: InitPayload): Promise<void> {
  try {
    const mod = (await import(payload.entry)) as { createInstance?: CreateWorkerInstance<unknown>; default?: unknown };
    const create = mod.createInstance ?? (mod.default as { createInstance?: CreateWorkerInstance<unknown> } | undefined)?.createInstance;
    if (typeof create !== 'function') {
      throw new InferError('INVALID_ARG', `worker entry '${payload.entry}' does not export createInstance(init, ctx)`);
    }
    instance = await create(payload.init, makeContext(payload));
    if (!instance || typeof instance.execute !== 'function') {
      throw new InferError('INVALID_ARG', `createInstance of '${payload.entry}' did not return an object with execute()`);
    }
    send({ t: 'ready' });
    const created = instance;
    if (payload.readiness && typeof created.isReady === 'function') {
      pollReadiness(() => created.isReady!(), payload.readiness, (ready, reason) => send({ t: 'readiness', ready, ...(reason !== undefined ? { reason } : {}) }));
    }
  } catch (error) {
    send({ t: 'fatal', error: toWireError(error) });
  }
}

function onBlsReply(msg: Extract<ToWorker, { t: 'bls-reply' }>): void {
  const pending = blsCalls.get(msg.call);
  if (!pending) return;
  const response = msg.response ? { ...msg.response, outputs: msg.response.outputs.map(normalizeTensor) } : undefined;
  if (pending.sink) {
    if (msg.more && response) {
      pending.sink.response(response);
      return;
    }
    blsCalls.delete(msg.call);
    if (response) pending.sink.response(response);
    pending.sink.complete(msg.error ? InferError.fromWire(msg.error) : undefined);
    return;
  }
  blsCalls.delete(msg.call);
  if (msg.error) pending.reject?.(InferError.fromWire(msg.error));
  else if (response) pending.resolve?.(response);
  else pending.reject?.(new InferError('INTERNAL', 'BLS reply carried neither a response nor an error'));
}

channel.onMessage((raw) => {
  if (!isProtocolMessage(raw)) return;
  const msg = raw as ToWorker;
  switch (msg.t) {
    case 'init':
      void initialize(msg.payload);
      break;
    case 'execute':
      void runExecute(msg);
      break;
    case 'abort':
      // Responses held for the window go first: a completion the cancellation triggers is not kept waiting for them.
      for (const flow of flows.get(msg.id) ?? []) flow?.drop(STREAM_CANCELLED);
      running.get(msg.id)?.abort();
      break;
    case 'sink-ack':
      flows.get(msg.id)?.[msg.index]?.acked(msg.bytes);
      break;
    case 'bls-reply':
      onBlsReply(msg);
      break;
    case 'metric-reply': {
      const pending = metricCalls.get(msg.call);
      metricCalls.delete(msg.call);
      if (msg.error) pending?.reject(InferError.fromWire(msg.error));
      else pending?.resolve(msg.value ?? 0);
      break;
    }
    case 'dispose':
      void (async () => {
        try {
          await instance?.dispose?.();
        } catch (error) {
          log.warn(`dispose failed: ${InferError.from(error).message}`);
        }
        process.exit(0);
      })();
      break;
  }
});

if (!parentPort) {
  // A thread's uncaught error reaches the host as an 'error' event; a child process must say it itself.
  process.on('uncaughtException', (err) => {
    const message = `uncaught: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
    channel.last({ t: 'fatal', error: { code: 'INTERNAL', message } });
  });
}
