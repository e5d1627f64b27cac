/**
 * Triton's generate extension: `POST .../generate` (one JSON response) and `.../generate_stream`
 * (Server-Sent Events, one `data: {...}` per response). Request keys other than `id` and
 * `parameters` name model inputs; each value (scalar or array) becomes that input's tensor, its
 * shape deduced from the config's dims (batch 1 prepended when the model batches). Response keys
 * are the output names; one-element outputs become scalars. Works for decoupled models too.
 */
import type { ServerResponse } from 'node:http';
import { InferError, type InferRequest, type InferResponse, type Tensor } from '@tritium/core';
import { parseModelVersion } from '@tritium/core/server';
import { elementCount } from '@tritium/core/tensor';
import type { TransportContext } from '../protocol/context.ts';
import type { TransportLimits } from '../protocol/limits.ts';
import { liftParameters, type LiftedParams } from '../protocol/params.ts';
import { checkShape, exactJsonParts, jsonDataToBytes, needsExactIntegers, tensorToJsonData, tensorToJsonScalar } from '../protocol/tensors.ts';
import { StreamQueue } from '../protocol/stream-queue.ts';
import { parseJsonExactIntegers } from './json-decode.ts';
import { invalidArg } from '../protocol/status.ts';

const wire = (t: string) => (t === 'TYPE_STRING' ? 'BYTES' : t.slice(5));

/** What a generate body needs of the model config (plain data, so the JSON worker can use it). */
export interface GenerateSpec {
  readonly input: readonly { readonly name: string; readonly data_type: string; readonly dims: readonly number[] }[];
  readonly max_batch_size: number;
}

export function generateSpecOf(ctx: TransportContext, model: string, version: string | undefined): GenerateSpec {
  const config = ctx.api.modelConfig(model, version || undefined);
  return { input: config.input.map((i) => ({ name: i.name, data_type: i.data_type, dims: [...i.dims] })), max_batch_size: config.max_batch_size };
}

export interface GeneratePlan {
  readonly id: string;
  readonly inputs: Tensor[];
  readonly lifted: LiftedParams;
}

/** Checks a parsed generate body and converts its values to tensors (pure: may run in the JSON worker). */
export function planGenerate(json: unknown, bytes: Uint8Array, spec: GenerateSpec, model: string, limits: TransportLimits): GeneratePlan {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw invalidArg('generate request body must be a JSON object');
  const { id, parameters, ...fields } = json as Record<string, unknown>;
  if (id !== undefined && typeof id !== 'string') throw invalidArg("the request 'id' must be a string");
  if (parameters !== undefined && (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))) {
    throw invalidArg("'parameters' must be a JSON object");
  }
  const lifted = liftParameters(parameters as Record<string, unknown> | undefined);
  // The body parsed again with exact integers, the first time a 64-bit input needs it (see planInfer).
  let exact: Record<string, unknown> | undefined;
  const inputs: Tensor[] = Object.entries(fields).map(([name, value]) => {
    const input = spec.input.find((i) => i.name === name);
    if (!input) throw invalidArg(`unexpected inference input '${name}' for model '${model}'`);
    const datatype = wire(input.data_type) as Tensor['datatype'];
    const given = needsExactIntegers(datatype, value) ? (exact ??= parseJsonExactIntegers(bytes) as Record<string, unknown>)[name] : value;
    const values = Array.isArray(given) ? given.flat(Infinity) : [given];
    const dims = input.dims.length ? [...input.dims] : [1];
    const fixed = dims.filter((d) => d >= 0).reduce((a, b) => a * b, 1);
    const variable = dims.filter((d) => d < 0).length;
    if ((variable === 0 && fixed !== values.length) || (variable === 1 && (fixed === 0 || values.length % fixed !== 0)) || variable > 1) {
      throw invalidArg(`unable to deduce the shape of input '${name}' for model '${model}' from ${values.length} element(s) and dims [${input.dims.join(',')}]`);
    }
    let shape = dims.map((d) => (d >= 0 ? d : values.length / fixed));
    if (spec.max_batch_size > 0) shape = [1, ...shape];
    const count = checkShape(shape, name, limits);
    return { name, datatype, shape, data: jsonDataToBytes(datatype, values, count, name) };
  });
  return { id: id ?? '', inputs, lifted };
}

/** The request a generate plan describes. */
export function generateRequest(plan: GeneratePlan, model: string, version: string | undefined, signal: AbortSignal): InferRequest {
  return {
    id: plan.id,
    model,
    version: parseModelVersion(version),
    inputs: plan.inputs,
    parameters: plan.lifted.parameters,
    ...(plan.lifted.sequence ? { sequence: plan.lifted.sequence } : {}),
    priority: plan.lifted.priority,
    timeoutUs: plan.lifted.timeoutUs,
    signal,
  };
}

export function generateJson(r: InferResponse): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (r.id) out['id'] = r.id;
  out['model_name'] = r.model;
  out['model_version'] = String(r.version);
  for (const t of r.outputs) out[t.name] = elementCount(t.shape) === 1 ? tensorToJsonScalar(t) : tensorToJsonData(t);
  return out;
}

/** Runs the request through the streaming API and collects or streams its responses (`onResponse` may push back, see ResponseSink). */
export function runGenerate(ctx: TransportContext, request: InferRequest, onResponse: (r: InferResponse) => void | Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    ctx.api.inferStream(request, {
      response: onResponse,
      complete: (error) => (error ? reject(error) : resolve()),
    });
  });
}

export async function generateOnce(ctx: TransportContext, request: InferRequest): Promise<Record<string, unknown>> {
  const responses: InferResponse[] = [];
  await runGenerate(ctx, request, (r) => void responses.push(r));
  if (responses.length !== 1) {
    throw new InferError('UNSUPPORTED', `generate expects exactly one response from model '${request.model}', got ${responses.length}; use generate_stream`);
  }
  return generateJson(responses[0]!);
}

const EVENT_START = Buffer.from('data: ');
const EVENT_END = Buffer.from('\n\n');

/**
 * SSE: `data: <json>\n\n` per response; an error becomes `data: {"error": ...}` and ends the stream.
 * A client that reads slower than the model sends is pushed back (protocol/stream-queue.ts): past
 * `--stream-max-queued-size` bytes unread the model's sends wait; held there for
 * `--stream-stall-timeout-secs`, the stream ends with an error event and its connection is closed
 * (which cancels the request).
 */
export async function generateStream(ctx: TransportContext, request: InferRequest, res: ServerResponse, errorJson: (e: unknown) => string): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const queue = new StreamQueue(ctx.streams, (error) => {
    res.write(`data: ${errorJson(error)}\n\n`);
    res.destroy();
  });
  res.once('close', () => queue.close());
  /** Writes one event from its parts; returns the queue's wait while the client is behind. */
  const event = (parts: readonly Buffer[]): Promise<void> | undefined => {
    let bytes = EVENT_START.length + EVENT_END.length;
    res.write(EVENT_START);
    for (const part of parts) {
      bytes += part.length;
      res.write(part);
    }
    res.write(EVENT_END, () => queue.sent(bytes));
    return queue.wrote(bytes);
  };
  try {
    await runGenerate(ctx, request, (r) => {
      if (res.destroyed) return;
      let parts: Buffer[];
      try {
        parts = exactJsonParts(generateJson(r));
      } catch (e) {
        parts = [Buffer.from(errorJson(e))];
      }
      return event(parts);
    });
  } catch (e) {
    if (!res.destroyed) res.write(`data: ${errorJson(e)}\n\n`);
  }
  queue.close();
  res.end();
}
