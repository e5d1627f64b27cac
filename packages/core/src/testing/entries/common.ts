/** Shared pieces of the test backends' worker entries (run inside the worker). */
import { InferError } from '../../errors.ts';
import type { Tensor } from '../../tensor/tensor.ts';
import type { ExecuteOutput } from '../../backend/spi.ts';
import type { InferRequest, InferResponse } from '../../types.ts';

/** What every test backend hands its worker: the tensor names of the config, in order. */
export interface TestModelInit {
  readonly model: string;
  readonly version: number;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /** The config's string `parameters` (e.g. the fault backend's `fault_on_start`). */
  readonly parameters?: Readonly<Record<string, string>>;
}

export function findInput(request: InferRequest, name: string): Tensor {
  const t = request.inputs.find((i) => i.name === name);
  if (!t) throw new InferError('INVALID_ARG', `expected input '${name}' in request '${request.id}' for model '${request.model}'`);
  return t;
}

/** Builds the response, keeping only the requested outputs when the request names some. */
export function respond(init: TestModelInit, request: InferRequest, outputs: readonly Tensor[]): InferResponse {
  const wanted = request.outputs && request.outputs.length > 0 ? new Set(request.outputs.map((o) => o.name)) : undefined;
  return {
    id: request.id,
    model: init.model,
    version: init.version,
    outputs: wanted ? outputs.filter((o) => wanted.has(o.name)) : outputs,
  };
}

/** Identity mapping: output i carries input i's datatype, shape and bytes. */
export function identityOutputs(init: TestModelInit, request: InferRequest): Tensor[] {
  return init.outputs.map((name, i) => {
    const input = findInput(request, init.inputs[i] ?? init.inputs[0]!);
    return { name, datatype: input.datatype, shape: input.shape, data: input.data };
  });
}

/** Runs `fn` per request; an error thrown for one request fails only that request. */
export async function perRequest(
  batch: readonly InferRequest[],
  fn: (request: InferRequest) => InferResponse | Promise<InferResponse>,
): Promise<ExecuteOutput> {
  const results: (InferResponse | InferError)[] = [];
  for (const request of batch) {
    try {
      results.push(await fn(request));
    } catch (error) {
      results.push(InferError.from(error));
    }
  }
  return { results };
}
