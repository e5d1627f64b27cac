/**
 * The BLS broker of the worker host: a model's calls to other models (`ctx.infer`, python-like's
 * `pb_utils.InferenceRequest.exec`) arrive as `bls` messages; the host runs each through the
 * server and sends back `bls-reply` messages. A call made inside an execute is cancelled with it,
 * names who waits on it (callers) and is a child of its traces; a process-isolated child's calls
 * are charged against its memory bound while the server holds them.
 */
import { InferError } from '../errors.ts';
import { compositeTrace } from '../trace/request-trace.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import type { Generation } from './host-generation.ts';
import { prepareResponse, toWireError, type FromWorker } from './protocol.ts';
import type { WorkerInstanceOptions } from './types.ts';
import { readBlsRequest } from './wire-check.ts';

/**
 * What one BLS call in flight is charged besides its inputs' bytes: the server's request, promise,
 * scheduler and signal objects (a few KiB), so a flood of empty calls is bounded too.
 */
const BLS_CALL_BYTES = 4096;

export type BlsMessage = Extract<FromWorker, { t: 'bls' }>;

/** What the broker needs of the instance: its label in messages, how it reaches the server, its bound. */
export interface BlsHost {
  readonly label: string;
  readonly options: Pick<WorkerInstanceOptions<unknown>, 'infer' | 'inferStream' | 'isolation' | 'sandbox'>;
}

/** Reads a `bls` message and runs its call, answering the worker with `bls-reply` messages. */
export function brokerBlsCall(host: BlsHost, gen: Generation, msg: BlsMessage): void {
  // Only plain fields cross from the worker: the signal, callers, trace hooks and token counts are the host's to set.
  const { signal: _s, callers: _c, trace: _t, computeSink: _k, carried: _r, tokens: _n, ...wire } = readBlsRequest(msg.request);
  const parent = msg.parent === undefined ? undefined : (gen.pending.get(msg.parent) ?? gen.streams.get(msg.parent));
  // A call from inside an execute is cancelled with it and names who waits on it; a stream can
  // also be cancelled by the worker itself.
  const parentTrace = compositeTrace(parent?.traces ?? []);
  let signal = parent?.children.signal;
  if (msg.stream) {
    const own = new AbortController();
    gen.blsStreams.set(msg.call, own);
    signal = signal ? AbortSignal.any([signal, own.signal]) : own.signal;
  }
  const request: InferRequest = {
    ...wire,
    ...(signal ? { signal } : {}),
    ...(parent?.callers ? { callers: parent.callers } : {}),
    // A call made during a traced execute is a child of the traces of the requests it carries.
    ...(parentTrace ? { trace: parentTrace.spawnChild() } : {}),
  };
  runBlsCall(host, gen, msg.call, request, msg.stream);
}

/** The bound of what one generation's BLS calls in flight may hold: process isolation with a memory bound only. */
function blsBudget(options: BlsHost['options']): number | undefined {
  const mb = options.isolation === 'process' ? options.sandbox?.memoryLimitMb : undefined;
  return mb === undefined ? undefined : Math.floor(mb * 1024 * 1024);
}

function runBlsCall(host: BlsHost, gen: Generation, call: number, request: InferRequest, stream: boolean): void {
  const { label, options } = host;
  // A process-isolated child's calls hold server memory it never holds itself (it may send a call
  // and drop it): what they hold at once is bounded by the child's own memory bound. The charge
  // is given back at the call's final answer.
  let charged = BLS_CALL_BYTES;
  for (const t of request.inputs) charged += t.data.byteLength;
  const budget = blsBudget(options);
  const refused =
    budget !== undefined && gen.blsBytes + charged > budget
      ? new InferError(
          'UNAVAILABLE',
          `${label}: BLS call to model '${String(request.model).slice(0, 80)}' refused: the calls it has in flight would hold ${gen.blsBytes + charged} bytes of the server's memory, over its bound of ${budget} (tritium.memory_mb)`,
        )
      : undefined;
  if (refused) charged = 0;
  gen.blsBytes += charged;
  const reply = (response?: InferResponse, error?: unknown, more?: boolean): void => {
    if (!more) {
      gen.blsBytes -= charged;
      charged = 0;
    }
    if (gen.dead) return;
    const transfer: ArrayBuffer[] = [];
    gen.channel.send(
      {
        t: 'bls-reply',
        call,
        response: response ? prepareResponse(response, gen.channel.canTransfer ? transfer : undefined, false) : undefined,
        error: error === undefined ? undefined : toWireError(error),
        more,
      },
      transfer,
    );
    if (!more) gen.blsStreams.delete(call);
  };
  if (refused) {
    reply(undefined, refused, false);
    return;
  }
  if (stream && options.inferStream) {
    options.inferStream(request, { response: (r) => reply(r, undefined, true), complete: (e) => reply(undefined, e ?? undefined, false) });
    return;
  }
  if (!options.infer) {
    reply(undefined, new InferError('UNSUPPORTED', `${label}: calling other models (BLS) is not available here`));
    return;
  }
  options.infer(request).then(
    (r) => (stream ? (reply(r, undefined, true), reply(undefined, undefined, false)) : reply(r)),
    (e) => reply(undefined, e ?? new InferError('INTERNAL', 'BLS call failed')),
  );
}
