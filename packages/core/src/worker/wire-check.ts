/**
 * What a worker sends is checked before the server uses it. A process-isolated model.ts (an uploaded
 * one included) can write its own frames to its channel (frames.ts), and a thread's code can post on its port, so any
 * message with our brand may be forged (a `result` whose packed JSON does not parse, say), and a
 * throw in the host's message handler would take the whole server down. Each check throws a `MalformedMessage`
 * naming what is wrong. A malformed response fails the request it answers (readResultMessage, and
 * the host for streamed ones); anything else malformed makes the host treat the worker as crashed
 * (its in-flight requests fail, it restarts), as it would a worker that died.
 *
 * The tensor check is what bounds the server's own work on a response: a shape must agree with the
 * bytes that came with it, so no serializer loops over elements the model never sent.
 */
import { ERROR_CODES, InferError, type WireError } from '../errors.ts';
import { DATA_TYPE_SIZE, type DataType } from '../tensor/data-type.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { readU32LE } from '../tensor/bytes-elements.ts';
import type { ExecuteOutput, ExecuteTimings } from '../backend/spi.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import { normalizeTensor, unpackResults, type FromWorkerBody, type LogLevel } from './protocol.ts';
import { splitOutputs } from '../tensor/batch.ts';
import { escapeControl } from '../logger.ts';

export class MalformedMessage extends Error {
  override readonly name = 'MalformedMessage';
}

/** The longest log line a worker may send (longer ones are cut, not refused: a model may log a big value). */
export const MAX_WORKER_LOG_CHARS = 64 * 1024;

const LOG_LEVELS: ReadonlySet<string> = new Set<LogLevel>(['error', 'warn', 'info', 'verbose']);
const TIMING_KEYS = ['computeInputNs', 'computeInferNs', 'computeOutputNs'] as const;

function bad(what: string): never {
  throw new MalformedMessage(what);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  const s = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return s.length > 80 ? `${s.slice(0, 80)}...` : s;
}

/** A tensor's name, datatype, shape and bytes agree (BYTES: exactly one length-prefixed element per shape element). */
export function checkWireTensor(tensor: unknown, where: string): asserts tensor is Tensor {
  if (!isRecord(tensor)) bad(`${where}: a tensor must be an object, got ${show(tensor)}`);
  const { name, datatype, shape, data } = tensor;
  if (typeof name !== 'string') bad(`${where}: a tensor name must be a string, got ${show(name)}`);
  const label = `${where}: tensor '${name.slice(0, 80)}'`;
  if (typeof datatype !== 'string' || !Object.hasOwn(DATA_TYPE_SIZE, datatype)) bad(`${label}: unknown datatype ${show(datatype)}`);
  if (!Array.isArray(shape)) bad(`${label}: shape must be an array, got ${show(shape)}`);
  let elements = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) bad(`${label}: shape [${shape.map(show).join(',')}] must hold non-negative integers`);
    elements *= d;
  }
  if (!(data instanceof Uint8Array)) bad(`${label}: data must be bytes, got ${show(data)}`);
  const size = DATA_TYPE_SIZE[datatype as DataType];
  if (size > 0) {
    if (elements * size !== data.byteLength) {
      bad(`${label}: ${data.byteLength} bytes for ${datatype} shape [${shape.join(',')}] (${elements * size} expected)`);
    }
    return;
  }
  // BYTES: walk the length prefixes; each element needs at least its 4-byte prefix, so a shape past
  // byteLength / 4 elements is refused before the walk.
  if (elements > data.byteLength / 4) bad(`${label}: ${data.byteLength} bytes cannot hold ${elements} BYTES elements`);
  let offset = 0;
  let count = 0;
  while (offset < data.byteLength) {
    if (offset + 4 > data.byteLength) bad(`${label}: truncated BYTES length prefix at byte ${offset}`);
    offset += 4 + readU32LE(data, offset);
    if (offset > data.byteLength) bad(`${label}: a BYTES element runs past the end (${data.byteLength} bytes)`);
    count++;
  }
  if (count !== elements) bad(`${label}: ${count} BYTES elements for shape [${shape.join(',')}] (${elements} expected)`);
}

function checkParameters(parameters: unknown, where: string): void {
  if (parameters === undefined) return;
  if (!isRecord(parameters)) bad(`${where}: parameters must be an object, got ${show(parameters)}`);
  for (const [key, value] of Object.entries(parameters)) {
    const ok = typeof value === 'string' || typeof value === 'boolean' || typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) bad(`${where}: parameter '${key.slice(0, 80)}' has the value ${show(value)} (a string, boolean or finite number expected)`);
  }
}

/** A response to a request: id, model, version, checked outputs and parameters. */
export function checkWireResponse(response: unknown, where: string): asserts response is InferResponse {
  if (!isRecord(response)) bad(`${where}: a response must be an object, got ${show(response)}`);
  if (typeof response['id'] !== 'string') bad(`${where}: a response id must be a string, got ${show(response['id'])}`);
  if (typeof response['model'] !== 'string') bad(`${where}: a response model must be a string, got ${show(response['model'])}`);
  if (!Number.isSafeInteger(response['version'])) bad(`${where}: a response version must be an integer, got ${show(response['version'])}`);
  const outputs = response['outputs'];
  if (!Array.isArray(outputs)) bad(`${where}: response outputs must be an array, got ${show(outputs)}`);
  outputs.forEach((t, i) => checkWireTensor(t, `${where} output ${i}`));
  checkParameters(response['parameters'], where);
}

export function checkWireError(error: unknown, where: string): asserts error is WireError {
  if (!isRecord(error)) bad(`${where}: an error must be an object, got ${show(error)}`);
  if (typeof error['code'] !== 'string' || !(ERROR_CODES as readonly string[]).includes(error['code'])) bad(`${where}: unknown error code ${show(error['code'])}`);
  if (typeof error['message'] !== 'string') bad(`${where}: an error message must be a string, got ${show(error['message'])}`);
}

/** Timings the statistics can add up; anything else (negative, NaN, not a number) is dropped, not trusted. */
export function saneTimings(timings: unknown): ExecuteTimings | undefined {
  if (!isRecord(timings)) return undefined;
  const out: Record<string, number> = {};
  for (const key of TIMING_KEYS) {
    const v = timings[key];
    if (v === undefined) continue;
    // A day of compute for one execute is already beyond any model's; larger values are forged.
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 86_400e9) return undefined;
    out[key] = v;
  }
  return out;
}

/** A readiness report: a boolean, and why not ready (cut to {@link MAX_WORKER_LOG_CHARS}; its control characters escaped). */
export function checkWireReadiness(ready: unknown, reason: unknown): { ready: boolean; reason: string } {
  if (typeof ready !== 'boolean') bad(`readiness: ready must be a boolean, got ${show(ready)}`);
  if (reason !== undefined && typeof reason !== 'string') bad(`readiness: a reason must be a string, got ${show(reason)}`);
  const text = escapeControl(reason ?? 'not ready');
  return { ready, reason: text.length > MAX_WORKER_LOG_CHARS ? `${text.slice(0, MAX_WORKER_LOG_CHARS)} ... [cut: ${text.length} characters]` : text };
}

/** A log line: one of the four levels, a string message (cut to {@link MAX_WORKER_LOG_CHARS}), a verbosity 1..2^31-1. */
export function checkWireLog(level: unknown, message: unknown, verbosity: unknown): { level: LogLevel; message: string; verbosity: number } {
  if (typeof level !== 'string' || !LOG_LEVELS.has(level)) bad(`log: unknown level ${show(level)}`);
  if (typeof message !== 'string') bad(`log: a message must be a string, got ${show(message)}`);
  const v = verbosity === undefined ? 1 : verbosity;
  if (!Number.isSafeInteger(v) || (v as number) < 0 || (v as number) > 2 ** 31 - 1) bad(`log: verbosity ${show(verbosity)} must be an integer within 0..2^31-1`);
  const text = message.length > MAX_WORKER_LOG_CHARS ? `${message.slice(0, MAX_WORKER_LOG_CHARS)} ... [log line cut: ${message.length} characters]` : message;
  return { level: level as LogLevel, message: text, verbosity: v as number };
}

/** A response as the host hands it on: its tensors normalized to Uint8Array views, then checked. */
export function readResponse(response: unknown, where: string): InferResponse {
  if (!isRecord(response) || !Array.isArray(response['outputs'])) bad(`${where}: a response must be an object with outputs, got ${show(response)}`);
  const normalized = { ...response, outputs: (response['outputs'] as unknown[]).map((t) => (isRecord(t) ? normalizeTensor(t as unknown as Tensor) : t)) };
  checkWireResponse(normalized, where);
  return normalized;
}

/**
 * What an execute's `result` message says: its batch-wide error, or exactly one result per request
 * (none for a decoupled execute, whose responses went through its sinks) and timings worth adding up.
 * A whole-batch result (WholeBatchOutput) is one response that this host splits by the rows of its
 * own requests, `batch`: the worker's word is needed for nothing but the tensors.
 */
export function readResultMessage(
  msg: Extract<FromWorkerBody, { t: 'result' }>,
  batch: readonly InferRequest[],
  decoupled: boolean,
  label: string,
): ExecuteOutput | InferError {
  if (msg.error !== undefined) {
    checkWireError(msg.error, 'result');
    return InferError.fromWire(msg.error);
  }
  const size = batch.length;
  let wire: unknown;
  if (msg.packed !== undefined) {
    try {
      wire = unpackResults(msg.packed);
    } catch (error) {
      bad(`result: packed results do not decode: ${error instanceof Error ? error.message : String(error)}`);
    }
  } else wire = msg.results ?? [];
  if (!Array.isArray(wire)) bad(`result: results must be an array, got ${show(wire)}`);
  const timings = saneTimings(msg.timings);
  if (msg.whole === true) {
    if (decoupled) bad('result: a whole-batch response to a decoupled execute');
    if (wire.length !== 1) bad(`result: ${wire.length} whole-batch responses (1 expected)`);
    const results = wholeResults(wire[0], batch, label);
    return timings ? { results, timings } : { results };
  }
  const expected = decoupled ? 0 : size;
  if (wire.length !== expected) bad(`result: ${wire.length} results for a batch of ${size} requests (${expected} expected)`);
  // What is wrong inside one request's result fails that request alone: its neighbours and the
  // worker are unaffected (a model with a bug in one output is not a crashed model).
  const results = wire.map((r: unknown, i) => {
    try {
      if (!isRecord(r)) bad(`result ${i}: must be an object, got ${show(r)}`);
      if (r['ok'] === true) return readResponse(r['response'], `result ${i}`);
      checkWireError(r['error'], `result ${i}`);
      return InferError.fromWire(r['error']);
    } catch (error) {
      if (error instanceof MalformedMessage) return malformedResponse(label, error);
      throw error;
    }
  });
  return timings ? { results, timings } : { results };
}

/** One response for the whole batch, split by the rows of each request (views); malformed, it fails every request. */
function wholeResults(r: unknown, batch: readonly InferRequest[], label: string): (InferResponse | InferError)[] {
  try {
    if (!isRecord(r) || r['ok'] !== true) bad(`whole-batch result: must be a response, got ${show(isRecord(r) ? r['ok'] : r)}`);
    const whole = readResponse(r['response'], 'whole-batch result');
    let split: InferResponse[];
    try {
      split = splitOutputs(batch, whole.outputs, { model: whole.model, version: whole.version });
    } catch (error) {
      bad(`whole-batch result: ${error instanceof Error ? error.message : String(error)}`);
    }
    const parameters = whole.parameters;
    if (parameters === undefined) return split;
    // Each request's response gets the whole's parameters. The split responses are this host's own
    // fresh objects: setting the field on each (same key order as a copy) spares 32 copies (~14 µs
    // of the host's turn for the example tokenizer's batch when its model sets parameters).
    for (const response of split) (response as { parameters?: InferResponse['parameters'] }).parameters = parameters;
    return split;
  } catch (error) {
    if (!(error instanceof MalformedMessage)) throw error;
    const failed = malformedResponse(label, error);
    return batch.map(() => failed);
  }
}

/** The error a request gets for a response its worker sent malformed. */
export function malformedResponse(label: string, error: MalformedMessage): InferError {
  return new InferError('INTERNAL', `${label} sent a malformed response: ${error.message}`);
}

/** A BLS call's request: an object whose inputs are checked tensors; the server validates it against the model next. */
export function readBlsRequest(request: unknown): InferRequest {
  if (!isRecord(request) || !Array.isArray(request['inputs'])) bad(`bls: a request must be an object with inputs, got ${show(request)}`);
  const inputs = (request['inputs'] as unknown[]).map((t, i) => {
    const tensor = isRecord(t) ? normalizeTensor(t as unknown as Tensor) : t;
    checkWireTensor(tensor, `bls input ${i}`);
    return tensor;
  });
  if (typeof request['model'] !== 'string') bad(`bls: the model name must be a string, got ${show(request['model'])}`);
  return { ...(request as unknown as InferRequest), inputs };
}
