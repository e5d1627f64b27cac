/**
 * Runs INSIDE an instance's worker: a built model instance as its executes see it (default and
 * decoupled), and how what the model hands back becomes the worker's plain data and errors.
 */
import { InferError, type InferRequest } from '@tritium/core';
import * as api from '../model-api/runtime-face.ts';
import type { TritonModel } from '../model-api/model.ts';
import { describeError } from './error-location.ts';
import type { PythonLikeInit } from './init.ts';
import type { PlainResponse } from './map-results.ts';

export type WireRequest = Omit<InferRequest, 'signal'>;

/** An initialized model and what its answers are checked against. */
export interface RunningModel {
  readonly init: PythonLikeInit;
  readonly model: TritonModel;
  /** Triton's prefix of an execute's failure, naming the instance. */
  readonly failPrefix: string;
  /** The outputs a request asked for: those it names, or all of the config's when it names none. */
  requestedOf(request: WireRequest): string[];
}

export function runningModel(init: PythonLikeInit, model: TritonModel): RunningModel {
  const allOutputs = init.config.output.map((o) => o.name);
  return {
    init,
    model,
    failPrefix: `Failed to process the request(s) for model instance '${init.instance.name}', message: `,
    requestedOf: (r) => (r.outputs && r.outputs.length > 0 ? r.outputs.map((o) => o.name) : allOutputs),
  };
}

/** An error from a hook as an InferError: a TritonError keeps its code and message; anything else is INTERNAL with its model.ts location. */
export function hookError(error: unknown, prefix: string, init: PythonLikeInit): InferError {
  if (InferError.is(error)) return new InferError(error.code, error.message);
  return new InferError('INTERNAL', `${prefix}${describeError(error, init.modelDir)}`);
}

/** Author response → plain data; a non-response is an INTERNAL error for the batch. */
export function plainResponse(value: unknown, index: number, modelName: string): PlainResponse {
  if (!(value instanceof api.InferenceResponse)) {
    const type = value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
    throw new InferError('INTERNAL', `model '${modelName}' execute returned ${type} at index ${index}; expected an InferenceResponse`);
  }
  const error = value.error();
  return {
    ...(error ? { error: new InferError(error.code, error.message) } : {}),
    outputs: value.outputTensors().map((t) => t.toWire()),
    ...(Object.keys(value.parameters()).length > 0 ? { parameters: value.parameters() } : {}),
  };
}
