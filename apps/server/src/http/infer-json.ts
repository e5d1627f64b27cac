/**
 * KServe v2 HTTP inference: the JSON header plus the binary tensor extension, in and out. Binary
 * inputs are sliced from the body (views, no copy); binary outputs are appended as they are. The
 * header is checked in two steps: planInfer (pure, may run in the JSON worker) then requestFromPlan
 * (binary slices, shared memory, on the main thread).
 */
import { InferError, isDataType, type DataType, type InferRequest, type InferResponse, type RequestedOutput, type Tensor } from '@tritium/core';
import { parseModelVersion } from '@tritium/core/server';
import { DATA_TYPE_SIZE, encodeBytesElements } from '@tritium/core/tensor';
import type { TransportContext } from '../protocol/context.ts';
import type { TransportLimits } from '../protocol/limits.ts';
import { liftParameters, type LiftedParams } from '../protocol/params.ts';
import { parseJsonBody, parseJsonExactIntegers } from './json-decode.ts';
import { shmRefOf, type ShmRef } from '../protocol/shared-memory.ts';
import { checkDataType, checkShape, exactJsonParts, jsonDataToBytes, needsExactIntegers, tensorToJsonData } from '../protocol/tensors.ts';
import { invalidArg } from '../protocol/status.ts';
import { firstOfEachName } from '../protocol/requested-outputs.ts';

export interface ParsedHttpInfer {
  readonly request: InferRequest;
  /** Per requested output: binary or JSON, and shared memory. */
  readonly outputBinary: ReadonlyMap<string, boolean>;
  readonly outputShm: ReadonlyMap<string, ShmRef>;
  readonly defaultBinary: boolean;
}

/** Where an input's bytes are: converted from JSON `data`, a slice of the binary part, or shared memory. */
export type PlannedSource = { readonly data: Uint8Array } | { readonly binary: readonly [offset: number, size: number] } | { readonly shm: ShmRef };

/**
 * A request as the JSON header describes it, checked and with JSON `data` already converted to
 * bytes, but nothing read from the body's binary part or shared memory yet. Plain data (structured-
 * cloneable), so the JSON worker can build it and hand it back with the bytes transferred.
 */
export interface InferPlan {
  readonly id: string;
  readonly inputs: readonly { readonly name: string; readonly datatype: DataType; readonly shape: number[]; readonly source: PlannedSource }[];
  readonly outputs?: RequestedOutput[];
  readonly outputBinary: Map<string, boolean>;
  readonly outputShm: Map<string, ShmRef>;
  readonly lifted: LiftedParams;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A `sequence_id` past 2^53 loses digits in JSON.parse, and two sequences could then collide: its
 * exact value is read back from the header text (the one `"sequence_id": <digits>` in it; any
 * doubt is refused rather than guessed).
 */
function exactSequenceId(parameters: Record<string, unknown> | undefined, header: Uint8Array): Record<string, unknown> | undefined {
  const id = parameters?.['sequence_id'];
  if (typeof id !== 'number' || Number.isSafeInteger(id) || !Number.isInteger(id) || id < 0) return parameters;
  const text = Buffer.from(header.buffer, header.byteOffset, header.byteLength).toString('utf8');
  const found = new Set([...text.matchAll(/"sequence_id"\s*:\s*(\d+)\s*(?=[,}])/g)].map((m) => m[1]!));
  const digits = found.size === 1 ? [...found][0]! : undefined;
  if (digits === undefined || BigInt(digits) > 0xffffffffffffffffn) {
    throw invalidArg(`Unable to parse 'sequence_id': expected an unsigned 64-bit integer or a string`);
  }
  return { ...parameters, sequence_id: BigInt(digits) };
}

/**
 * Checks a parsed inference JSON header and converts its JSON tensor data (pure: no server state, so
 * it runs on the main thread for small bodies and in the JSON worker for large ones).
 * `headerBytes` is the header's JSON text (for exactSequenceId), `binaryLength` the size of the binary
 * part that follows it.
 */
export function planInfer(header: unknown, headerBytes: Uint8Array, binaryLength: number, model: string, limits: TransportLimits): InferPlan {
  if (!isObject(header)) throw invalidArg('inference request JSON must be an object');
  const { inputs: rawInputs, outputs: rawOutputs, id, parameters } = header;
  if (!Array.isArray(rawInputs)) throw invalidArg("inference request JSON must have an 'inputs' array");
  if (id !== undefined && typeof id !== 'string') throw invalidArg("the request 'id' must be a string");
  if (parameters !== undefined && !isObject(parameters)) throw invalidArg("request 'parameters' must be an object");
  const lifted = liftParameters(exactSequenceId(parameters, headerBytes));
  let offset = 0;
  // The inputs parsed again with exact integers, the first time an INT64/UINT64 input needs them.
  let exactInputs: unknown[] | undefined;
  const exactData = (i: number): unknown => {
    exactInputs ??= ((parseJsonExactIntegers(headerBytes) as { inputs?: unknown[] }).inputs ?? []);
    const raw = exactInputs[i];
    return isObject(raw) ? raw['data'] : undefined;
  };
  const inputs = rawInputs.map((raw: unknown, i: number) => {
    if (!isObject(raw)) throw invalidArg(`input ${i} must be an object`);
    const name = raw['name'];
    if (typeof name !== 'string') throw invalidArg(`input ${i} must have a string 'name'`);
    if (typeof raw['datatype'] !== 'string') throw invalidArg(`input '${name}' must have a string 'datatype'`);
    if (!Array.isArray(raw['shape'])) throw invalidArg(`input '${name}' must have a 'shape' array`);
    const datatype = checkDataType(raw['datatype'], name);
    const shape = raw['shape'] as number[];
    const count = checkShape(shape, name, limits);
    const params = raw['parameters'];
    if (params !== undefined && !isObject(params)) throw invalidArg(`'parameters' of input '${name}' must be an object`);
    const shm = shmRefOf(params, name);
    const binarySize = params?.['binary_data_size'];
    let source: PlannedSource;
    if (shm) {
      source = { shm };
    } else if (binarySize !== undefined) {
      if (typeof binarySize !== 'number' || !Number.isInteger(binarySize) || binarySize < 0) {
        throw invalidArg(`'binary_data_size' of input '${name}' must be a non-negative integer`);
      }
      if (offset + binarySize > binaryLength) {
        throw invalidArg(
          `unexpected total byte size ${offset + binarySize} for input '${name}', expecting no more than ${binaryLength} bytes of binary data`,
        );
      }
      source = { binary: [offset, binarySize] };
      offset += binarySize;
    } else if ('data' in raw) {
      const data = needsExactIntegers(datatype, raw['data']) ? exactData(i) : raw['data'];
      source = { data: jsonDataToBytes(datatype, data, count, name) };
    } else {
      throw invalidArg(`unable to find data for input tensor '${name}' for model '${model}' in request.`);
    }
    return { name, datatype, shape, source };
  });
  if (offset !== binaryLength) {
    throw invalidArg(`unexpected additional input data for model '${model}': ${binaryLength - offset} bytes of binary data not claimed by any input`);
  }
  const outputBinary = new Map<string, boolean>();
  const outputShm = new Map<string, ShmRef>();
  let outputs: RequestedOutput[] | undefined;
  if (rawOutputs !== undefined) {
    if (!Array.isArray(rawOutputs)) throw invalidArg("'outputs' must be an array");
    rawOutputs.forEach((raw: unknown, i: number) => {
      if (!isObject(raw) || typeof raw['name'] !== 'string') throw invalidArg(`output ${i} must be an object with a string 'name'`);
    });
    outputs = firstOfEachName(rawOutputs as { name: string; parameters?: unknown }[]).map((raw) => {
      const name = raw.name;
      const p = raw.parameters;
      if (p !== undefined && !isObject(p)) throw invalidArg(`'parameters' of output '${name}' must be an object`);
      const shm = shmRefOf(p, name);
      if (shm) outputShm.set(name, shm);
      if (typeof p?.['binary_data'] === 'boolean') outputBinary.set(name, p['binary_data']);
      const forwarded: Record<string, string | number | boolean> = {};
      for (const [k, v] of Object.entries(p ?? {})) {
        if (k === 'binary_data' || k.startsWith('shared_memory_')) continue;
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') forwarded[k] = v;
      }
      return Object.keys(forwarded).length ? { name, parameters: forwarded } : { name };
    });
  }
  return { id: id ?? '', inputs, outputs, outputBinary, outputShm, lifted };
}

/** The request a plan describes: binary inputs sliced from `binary` (views), shared-memory inputs read. */
export function requestFromPlan(
  plan: InferPlan,
  binary: Uint8Array,
  model: string,
  versionText: string | undefined,
  ctx: TransportContext,
  signal: AbortSignal,
): ParsedHttpInfer {
  const inputs: Tensor[] = plan.inputs.map(({ name, datatype, shape, source }) => {
    let data: Uint8Array;
    if ('data' in source) data = source.data;
    else if ('binary' in source) data = binary.subarray(source.binary[0], source.binary[0] + source.binary[1]);
    else data = ctx.shm.readInput(source.shm, datatype, shape, name, model);
    return { name, datatype, shape, data };
  });
  const { lifted } = plan;
  const request: InferRequest = {
    id: plan.id,
    model,
    version: parseModelVersion(versionText),
    inputs,
    outputs: plan.outputs,
    parameters: lifted.parameters,
    ...(lifted.sequence ? { sequence: lifted.sequence } : {}),
    priority: lifted.priority,
    timeoutUs: lifted.timeoutUs,
    signal,
  };
  return { request, outputBinary: plan.outputBinary, outputShm: plan.outputShm, defaultBinary: lifted.binaryDataOutput ?? false };
}

/**
 * Parses an inference body on the calling thread: `Inference-Header-Content-Length: 0` is a raw
 * binary request; otherwise the JSON header (the whole body without the header length) then the
 * binary part. The transport sends large JSON headers to the JSON worker instead (json-parser.ts).
 */
export function parseInferBody(
  body: Buffer,
  headerLength: number | undefined,
  model: string,
  versionText: string | undefined,
  ctx: TransportContext,
  signal: AbortSignal,
): ParsedHttpInfer {
  if (headerLength === 0) return rawBinaryRequest(body, model, versionText, parseModelVersion(versionText), ctx, signal);
  const jsonLength = checkHeaderLength(headerLength, body.length);
  const headerBytes = body.subarray(0, jsonLength);
  const plan = planInfer(parseJsonBody(headerBytes), headerBytes, body.length - jsonLength, model, ctx.limits);
  return requestFromPlan(plan, body.subarray(jsonLength), model, versionText, ctx, signal);
}

/** The JSON header's length: Inference-Header-Content-Length, or the whole body without it. */
export function checkHeaderLength(headerLength: number | undefined, bodyLength: number): number {
  const jsonLength = headerLength ?? bodyLength;
  if (jsonLength > bodyLength) {
    throw invalidArg(`Inference-Header-Content-Length (${jsonLength}) is larger than the request body (${bodyLength} bytes)`);
  }
  return jsonLength;
}

/** `Inference-Header-Content-Length: 0`: the body is the one input's bytes, batch 1, outputs binary. */
function rawBinaryRequest(
  body: Buffer,
  model: string,
  versionText: string | undefined,
  version: number | undefined,
  ctx: TransportContext,
  signal: AbortSignal,
): ParsedHttpInfer {
  const meta = ctx.api.modelMetadata(model, versionText || undefined);
  const config = ctx.api.modelConfig(model, versionText || undefined);
  if (meta.inputs.length !== 1) {
    throw invalidArg(
      `Raw request must only have 1 input (found ${meta.inputs.length}) to be deduced but got ${meta.inputs.length} inputs in '${model}' model configuration`,
    );
  }
  const input = meta.inputs[0]!;
  const batched = config.max_batch_size > 0;
  const dims = batched ? input.shape.slice(1) : [...input.shape];
  let shape: number[];
  let data: Uint8Array = body;
  if (input.datatype === 'BYTES') {
    // Triton (InferenceRequest::Normalize): the body is the one element of an input shaped [1], sent
    // without the 4-byte length prefix BYTES elements carry, which the server prepends (passed on as
    // it is, its first 4 bytes would be read as a length).
    if (dims.some((d) => d < 0) || dims.reduce((a, b) => a * b, 1) !== 1) {
      throw invalidArg(`For BYTE datatype raw input '${input.name}', the model must have input shape [1]`);
    }
    shape = dims;
    data = encodeBytesElements([body]);
  } else {
    const size = isDataType(input.datatype) ? DATA_TYPE_SIZE[input.datatype] : NaN;
    const fixed = dims.filter((d) => d >= 0).reduce((a, b) => a * b, 1);
    const variable = dims.filter((d) => d < 0).length;
    if (variable > 1) throw invalidArg(`Raw request for '${model}' cannot deduce the shape of '${input.name}' with more than one variable dimension`);
    const elements = body.length / size;
    if (!Number.isInteger(elements) || (variable === 0 && elements !== fixed) || (variable === 1 && elements % fixed !== 0)) {
      throw invalidArg(`Raw request for '${model}': ${body.length} bytes do not fit the shape of input '${input.name}'`);
    }
    shape = dims.map((d) => (d >= 0 ? d : elements / fixed));
  }
  if (batched) shape = [1, ...shape];
  const request: InferRequest = {
    id: '',
    model,
    version,
    inputs: [{ name: input.name, datatype: input.datatype, shape, data }],
    signal,
  };
  return { request, outputBinary: new Map(), outputShm: new Map(), defaultBinary: true };
}

export interface HttpInferReply {
  /** The JSON header in parts (a BYTES output's JSON data is a part of its own, see exactJsonParts). */
  readonly json: readonly Buffer[];
  /** Its size in bytes. */
  readonly jsonLength: number;
  readonly binary: readonly Uint8Array[];
}

/** Builds the response: JSON header (id omitted if empty, flat data) and binary parts in output order. */
export function buildInferReply(r: InferResponse, parsed: ParsedHttpInfer, ctx: TransportContext): HttpInferReply {
  const binary: Uint8Array[] = [];
  const outputs = r.outputs.map((t) => {
    const out: Record<string, unknown> = { name: t.name, datatype: t.datatype, shape: t.shape };
    const shm = parsed.outputShm.get(t.name);
    if (shm) {
      ctx.shm.write(shm.region, shm.offset, shm.byteSize, t.data, t.name);
      out['parameters'] = { shared_memory_region: shm.region, shared_memory_byte_size: t.data.byteLength, shared_memory_offset: shm.offset };
    } else if (parsed.outputBinary.get(t.name) ?? parsed.defaultBinary) {
      out['parameters'] = { binary_data_size: t.data.byteLength };
      binary.push(t.data);
    } else {
      out['data'] = tensorToJsonData(t);
    }
    return out;
  });
  const head: Record<string, unknown> = {};
  if (r.id) head['id'] = r.id;
  head['model_name'] = r.model;
  head['model_version'] = String(r.version);
  if (r.parameters && Object.keys(r.parameters).length) {
    head['parameters'] = Object.fromEntries(
      Object.entries(r.parameters).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]),
    );
  }
  head['outputs'] = outputs;
  const json = exactJsonParts(head);
  let jsonLength = 0;
  for (const part of json) jsonLength += part.length;
  return { json, jsonLength, binary };
}

export const DECOUPLED_HTTP_MESSAGE = "HTTP end point doesn't support models with decoupled transaction policy";

/** Decoupled models are stream-only. A lookup error is left for `infer` to report (it knows the state). */
export function checkNotDecoupled(ctx: TransportContext, model: string, version: string | undefined): void {
  let decoupled = false;
  try {
    decoupled = ctx.api.isDecoupled(model, version || undefined);
  } catch {
    return;
  }
  if (decoupled) throw new InferError('UNSUPPORTED', DECOUPLED_HTTP_MESSAGE);
}
