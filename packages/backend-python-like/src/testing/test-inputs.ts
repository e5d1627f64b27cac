/**
 * A test's request as the server would receive it: each input converted with the config's datatype
 * in the shape the config implies (nested arrays through tensorFromJson, as `tritium model run`
 * reads them; typed arrays as they are), then checked by core's request validation.
 */
import { InferError, type InferRequest, type ModelConfig, type Tensor as WireTensor } from '@tritium/core';
import { validateRequest } from '@tritium/core/backend';
import { DATA_TYPE_SIZE, TYPED_ARRAY_CONSTRUCTORS, configToWireDataType } from '@tritium/core/tensor';
import { impliedShape, tensorFromJson } from '../json-input.ts';

function fromTypedArray(config: ModelConfig, name: string, data: ArrayBufferView, shape: readonly number[] | undefined): WireTensor {
  const spec = config.input.find((i) => i.name === name);
  const datatype = spec ? configToWireDataType(spec.data_type) : undefined;
  if (!spec || !datatype) {
    throw new InferError('INVALID_ARG', `unexpected inference input '${name}' for model '${config.name}' (inputs: ${config.input.map((i) => i.name).join(', ')})`);
  }
  const Ctor = TYPED_ARRAY_CONSTRUCTORS[datatype];
  if (datatype === 'BYTES' || data.constructor !== Ctor) {
    throw new InferError('INVALID_ARG', `input '${name}' is ${datatype}: give ${datatype === 'BYTES' ? 'strings' : `a ${Ctor.name}`}, not a ${data.constructor.name}`);
  }
  // Its class is the datatype's (checked above): one element per DATA_TYPE_SIZE bytes.
  const length = data.byteLength / DATA_TYPE_SIZE[datatype];
  const batching = config.max_batch_size > 0;
  const finalShape = shape ? (batching && shape.length === spec.dims.length ? [1, ...shape] : [...shape]) : impliedShape([length], spec.dims, batching);
  return { name, datatype, shape: finalShape, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

function isTypedArray(value: unknown): value is ArrayBufferView {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

function toTensor(config: ModelConfig, name: string, value: unknown): WireTensor {
  if (isTypedArray(value)) return fromTypedArray(config, name, value, undefined);
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'data' in value) {
    const v = value as { shape?: readonly number[]; data: unknown };
    if (isTypedArray(v.data)) return fromTypedArray(config, name, v.data, v.shape);
  }
  return tensorFromJson(config, name, value);
}

/** The wire requests of one batch, each checked as the server checks a client's. */
export function wireRequests(config: ModelConfig, version: number, requests: readonly Readonly<Record<string, unknown>>[], calls: number): InferRequest[] {
  return requests.map((inputs, i) => {
    const request: InferRequest = {
      id: `test-${calls}-${i}`,
      model: config.name,
      version,
      inputs: Object.entries(inputs).map(([name, value]) => toTensor(config, name, value)),
    };
    validateRequest(config, request);
    return request;
  });
}
