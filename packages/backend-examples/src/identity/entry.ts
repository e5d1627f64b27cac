/**
 * Worker entry of the identity backend (identity_backend `TRITONBACKEND_ModelInstanceExecute`):
 * after the configured delay, each requested OUTPUT<i> is a copy of INPUT<i> (datatype, shape,
 * bytes); an optional input left out gives zeros; every response carries the backend's example
 * parameters `param0`..`param3`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InferError, type InferRequest, type Tensor } from '@tritium/core';
import { type ExecuteResult } from '@tritium/core/backend';
import { DATA_TYPE_SIZE } from '@tritium/core/tensor';
import { type CreateWorkerInstance } from '@tritium/core/worker';
import { executeDelayOf, type IdentityInit } from './plan.ts';

/** The response parameters Triton's identity backend attaches to every response. */
export const IDENTITY_RESPONSE_PARAMETERS = {
  param0: 'an example string parameter',
  param1: 42,
  param2: false,
  param3: 123.123,
} as const;

function zeros(init: IdentityInit, request: InferRequest, name: string, index: string): Tensor | undefined {
  const spec = init.optional[/^\d+$/.test(index) ? String(Number(index)) : index];
  if (!spec) return undefined;
  const first = request.inputs[0];
  const batchDim = init.batching && first && first.shape.length > 0 ? first.shape[0]! : 0;
  const shape = batchDim !== 0 ? [batchDim, ...spec.shape] : [...spec.shape];
  const count = shape.reduce((n, d) => n * d, 1);
  // BYTES: each element an empty string (a zero u32 length), as memset(0) gives.
  const size = spec.datatype === 'BYTES' ? 4 : DATA_TYPE_SIZE[spec.datatype];
  return { name, datatype: spec.datatype, shape, data: new Uint8Array(count * size) };
}

function respond(init: IdentityInit, request: InferRequest): ExecuteResult {
  const requested = request.outputs && request.outputs.length > 0 ? request.outputs.map((o) => o.name) : init.outputs;
  const outputs: Tensor[] = [];
  for (const name of requested) {
    const index = name.slice('OUTPUT'.length);
    const inputName = `INPUT${index}`;
    const input = request.inputs.find((t) => t.name === inputName);
    if (input) {
      outputs.push({ name, datatype: input.datatype, shape: input.shape, data: input.data });
      continue;
    }
    const zero = zeros(init, request, name, index);
    if (!zero) return new InferError('UNSUPPORTED', `failed to get input '${inputName}'`);
    outputs.push(zero);
  }
  return { id: request.id, model: init.model, version: init.version, outputs, parameters: { ...IDENTITY_RESPONSE_PARAMETERS } };
}

export const createInstance: CreateWorkerInstance<IdentityInit> = async (init) => {
  const delayMs = executeDelayOf(init);
  return {
    async execute(batch, { signal }) {
      if (delayMs > 0) {
        try {
          await sleep(delayMs, undefined, { signal });
        } catch {
          return { results: batch.map(() => new InferError('CANCELLED', 'request cancelled')) };
        }
      }
      return { results: batch.map((request) => respond(init, request)) };
    },
  };
};
