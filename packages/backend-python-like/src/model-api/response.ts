import type { ParameterValue } from '@tritium/core';
import { TritonError, toTritonError } from './errors.ts';
import { Tensor } from './tensor.ts';

export interface InferenceResponseInit {
  /** The outputs (only requested ones reach the client; extra ones are dropped). */
  readonly outputTensors?: readonly Tensor[];
  /** Set to fail only this response's request with this code and message. */
  readonly error?: TritonError | Error | string;
  /** Response parameters sent back to the client. */
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
}

/**
 * `pb_utils.InferenceResponse`: `new InferenceResponse({ outputTensors: [...] })`, or
 * `new InferenceResponse({ outputTensors: [], error: new TritonError('bad', TritonError.INVALID_ARG) })`
 * to fail one request. The positional form `new InferenceResponse(outputTensors, error)` also works.
 */
export class InferenceResponse {
  readonly #outputs: Tensor[];
  readonly #error: TritonError | undefined;
  readonly #parameters: Readonly<Record<string, ParameterValue>>;

  constructor(init?: InferenceResponseInit | readonly Tensor[], error?: TritonError | Error | string) {
    const options: InferenceResponseInit = Array.isArray(init)
      ? { outputTensors: init as readonly Tensor[], error }
      : ((init as InferenceResponseInit | undefined) ?? { error });
    const outputs = options.outputTensors ?? [];
    if (!Array.isArray(outputs)) {
      throw new TritonError('InferenceResponse outputTensors must be an array of Tensor', TritonError.INVALID_ARG);
    }
    outputs.forEach((t, i) => {
      if (!(t instanceof Tensor)) {
        throw new TritonError(
          `InferenceResponse outputTensors[${i}] is not a Tensor (build outputs with new Tensor(name, data, shape))`,
          TritonError.INVALID_ARG,
        );
      }
    });
    this.#outputs = [...outputs];
    const err = options.error ?? error;
    this.#error = err === undefined || err === null ? undefined : toTritonError(err);
    this.#parameters = { ...(options.parameters ?? {}) };
  }

  outputTensors(): Tensor[] {
    return [...this.#outputs];
  }

  hasError(): boolean {
    return this.#error !== undefined;
  }

  error(): TritonError | undefined {
    return this.#error;
  }

  parameters(): Readonly<Record<string, ParameterValue>> {
    return this.#parameters;
  }
}

/** `pb_utils.get_output_tensor_by_name(response, name)`: undefined when absent. */
export function getOutputTensorByName(response: InferenceResponse, name: string): Tensor | undefined {
  return response.outputTensors().find((t) => t.name === name);
}
