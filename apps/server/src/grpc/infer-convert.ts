/**
 * ModelInferRequest (as decoded by the hand-written codec) → InferRequest, and InferResponse →
 * ModelInferResponse. Raw input bytes are passed on as the views the codec produced (no copy).
 */
import { type InferRequest, type InferResponse, type RequestedOutput, type Tensor } from '@tritium/core';
import { parseModelVersion } from '@tritium/core/server';
import type { WireInferRequest, WireInferResponse, WireParams, WireTensor } from '@tritium/client/proto';
import type { TransportContext } from '../protocol/context.ts';
import { liftParameters, type LiftedParams } from '../protocol/params.ts';
import { shmRefOf, type ShmRef } from '../protocol/shared-memory.ts';
import { checkDataType, checkShape, contentsToBytes } from '../protocol/tensors.ts';
import { invalidArg } from '../protocol/status.ts';
import { firstOfEachName } from '../protocol/requested-outputs.ts';
import { forwardHeaders } from '../protocol/header-forward.ts';

export interface ConvertedRequest {
  readonly request: InferRequest;
  readonly lifted: LiftedParams;
  /** Outputs the client wants written into shared memory. */
  readonly outputShm: ReadonlyMap<string, ShmRef>;
}

export function fromWireRequest(
  m: WireInferRequest,
  ctx: TransportContext,
  signal?: AbortSignal,
  metadata: () => Iterable<readonly [string, unknown]> = () => [],
): ConvertedRequest {
  const model = m.model_name;
  const version = parseModelVersion(m.model_version);
  const lifted = liftParameters(m.parameters, 'grpc');
  const usesRaw = m.raw_input_contents.length > 0;
  let rawIndex = 0;
  const inputs: Tensor[] = [];
  for (const t of m.inputs) {
    const datatype = checkDataType(t.datatype, t.name);
    const count = checkShape(t.shape, t.name, ctx.limits);
    const shm = shmRefOf(t.parameters, t.name);
    let data: Uint8Array;
    if (shm) {
      data = ctx.shm.readInput(shm, datatype, t.shape, t.name, model);
    } else if (usesRaw) {
      if (t.contents && (t.contents.bytes_packed || Object.values(t.contents).some((v) => Array.isArray(v) && v.length > 0))) {
        throw invalidArg(`contents field must not be specified when using raw_input_contents for '${t.name}' for model '${model}'`);
      }
      const raw = m.raw_input_contents[rawIndex++];
      if (raw === undefined) throw invalidArg(`unable to find data for input tensor '${t.name}' for model '${model}' in request.`);
      data = raw;
    } else if (t.contents) {
      data = contentsToBytes(datatype, t.contents, count, t.name, model);
    } else {
      throw invalidArg(`unable to find data for input tensor '${t.name}' for model '${model}' in request.`);
    }
    inputs.push({ name: t.name, datatype, shape: t.shape, data });
  }
  if (rawIndex < m.raw_input_contents.length) {
    throw invalidArg(
      `raw_input_contents has ${m.raw_input_contents.length} entries but only ${rawIndex} inputs of model '${model}' take their data from it`,
    );
  }
  const outputShm = new Map<string, ShmRef>();
  const outputs: RequestedOutput[] = firstOfEachName(m.outputs).map((o) => {
    const shm = shmRefOf(o.parameters, o.name);
    if (shm) outputShm.set(o.name, shm);
    const params = { ...o.parameters };
    delete params['shared_memory_region'];
    delete params['shared_memory_offset'];
    delete params['shared_memory_byte_size'];
    delete params['binary_data'];
    return Object.keys(params).length ? { name: o.name, parameters: params } : { name: o.name };
  });
  const request: InferRequest = forwardHeaders({
    id: m.id,
    model,
    version,
    inputs,
    outputs,
    parameters: lifted.parameters,
    ...(lifted.sequence ? { sequence: lifted.sequence } : {}),
    priority: lifted.priority,
    timeoutUs: lifted.timeoutUs,
    signal,
  }, ctx.headerForward?.grpc, metadata);
  return { request, lifted, outputShm };
}

/** InferResponse → ModelInferResponse; outputs always in raw_output_contents (as Triton). */
export function toWireResponse(
  r: InferResponse,
  outputShm: ReadonlyMap<string, ShmRef>,
  ctx: TransportContext,
  extraParams?: WireParams,
): WireInferResponse {
  const outputs: WireTensor[] = [];
  const raw: Uint8Array[] = [];
  for (const t of r.outputs) {
    const shm = outputShm.get(t.name);
    if (shm) {
      ctx.shm.write(shm.region, shm.offset, shm.byteSize, t.data, t.name);
      outputs.push({
        name: t.name,
        datatype: t.datatype,
        shape: [...t.shape],
        parameters: { shared_memory_region: shm.region, shared_memory_byte_size: t.data.byteLength, shared_memory_offset: shm.offset },
      });
      // An empty entry keeps raw_output_contents aligned with outputs (tritonclient indexes by position).
      raw.push(new Uint8Array(0));
    } else {
      outputs.push({ name: t.name, datatype: t.datatype, shape: [...t.shape], parameters: {} });
      raw.push(t.data);
    }
  }
  const parameters: WireParams = {};
  for (const [k, v] of Object.entries(r.parameters ?? {})) parameters[k] = v;
  Object.assign(parameters, extraParams);
  return {
    model_name: r.model,
    model_version: String(r.version),
    id: r.id,
    parameters,
    outputs,
    raw_output_contents: raw,
  };
}
