import type { ParameterValue } from '@tritium/core';
import { TritonError, toTritonError } from './errors.ts';
import type { InferenceResponse } from './response.ts';
import { ResponseIterator, errorResponse, toAuthorResponse } from './response-iterator.ts';
import { runtimeLink, type WireInferRequest } from './runtime-link.ts';
import { Tensor } from './tensor.ts';
import type { InputTensor, ModelSpec } from './model-spec.ts';

/** `pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL`: the last `send` of a request. */
export const TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1;
export const TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1;
export const TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2;
export const TRITONSERVER_REQUEST_RELEASE_ALL = 1;
export const TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2;

/**
 * `request.getResponseSender()`: in a decoupled model, send zero or more responses, then
 * `send(undefined, TRITONSERVER_RESPONSE_COMPLETE_FINAL)` (or a last response with that flag).
 * Sending after the final flag throws.
 *
 * `send` returns a promise: it resolves once the response is on its way to the client, at once
 * unless the client reads slower than the model sends (then it waits until the client has room, so
 * `await sender.send(r)` in a loop streams at the client's pace and holds nothing extra); it rejects
 * with a TritonError (CANCELLED) once the request was cancelled, e.g. the client left, so an awaiting
 * loop stops. A model that does not await keeps its unsent responses in its own memory.
 */
export interface InferenceResponseSender {
  send(response?: InferenceResponse | null, flags?: number): Promise<void>;
  isCancelled(): boolean;
}

/** What the instance runtime attaches to a request it hands to `execute` (not part of the author API). */
export interface IncomingRequestState {
  readonly wire: WireInferRequest;
  /** Output names the client asked for, or every output of the model when it named none. */
  readonly requestedOutputNames: readonly string[];
  readonly sender: () => InferenceResponseSender;
  readonly isCancelled: () => boolean;
}

/** Marks the internal constructor form, so authors cannot build an "incoming" request by accident. */
export const INCOMING: unique symbol = Symbol('incoming request');

export interface InferenceRequestInit {
  /** BLS: the model to call. */
  readonly modelName: string;
  readonly inputs: readonly Tensor[];
  /** Outputs to return (all when empty/absent). */
  readonly requestedOutputNames?: readonly string[];
  /** Version to call; -1/undefined = the one the model's policy serves. */
  readonly modelVersion?: number;
  readonly requestId?: string;
  /** BLS to a sequence model: the sequence's ID (pb_utils' `correlation_id`) and `flags` (SEQUENCE_START / _END). */
  readonly correlationId?: number | bigint | string;
  readonly flags?: number;
  /** Queue timeout in microseconds (0 = none). */
  readonly timeout?: number;
  readonly parameters?: Readonly<Record<string, ParameterValue>>;
  readonly [INCOMING]?: IncomingRequestState;
}

export interface ExecOptions {
  /** Decoupled callee: `exec({ decoupled: true })` returns an async iterable of responses. */
  readonly decoupled?: boolean;
}

let blsCounter = 0;

/** The `sequence` of a BLS request built with a correlation ID (none for 0 / '' / absent). */
function sequenceOf(init: InferenceRequestInit): Pick<WireInferRequest, 'sequence'> | undefined {
  const id = init.correlationId;
  if (id === undefined || id === 0 || id === 0n || id === '') return undefined;
  const flags = init.flags ?? 0;
  return { sequence: { id, start: (flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_START) !== 0, end: (flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) !== 0 } };
}

/**
 * `pb_utils.InferenceRequest`. In `execute` each request holds the client's inputs (with their batch
 * dimension when the model batches). Build one yourself to call another model (BLS):
 *
 * ```ts
 * const response = await new InferenceRequest({ modelName: 'add_sub', requestedOutputNames: ['OUTPUT0'], inputs: [a, b] }).exec();
 * if (response.hasError()) throw response.error();
 * ```
 */
export class InferenceRequest<S extends ModelSpec = ModelSpec> {
  readonly #init: InferenceRequestInit;
  readonly #incoming: IncomingRequestState | undefined;
  #inputs: Tensor[] | undefined;

  constructor(init: InferenceRequestInit) {
    if (!init || typeof init !== 'object') {
      throw new TritonError('InferenceRequest takes { modelName, inputs, requestedOutputNames? }', TritonError.INVALID_ARG);
    }
    this.#incoming = init[INCOMING];
    if (!this.#incoming) {
      if (typeof init.modelName !== 'string' || init.modelName === '') {
        throw new TritonError('InferenceRequest: modelName must be a non-empty string', TritonError.INVALID_ARG);
      }
      (init.inputs ?? []).forEach((t, i) => {
        if (!(t instanceof Tensor)) throw new TritonError(`InferenceRequest: inputs[${i}] is not a Tensor`, TritonError.INVALID_ARG);
      });
    }
    this.#init = init;
  }

  /** The input tensors. */
  inputs(): Tensor[] {
    if (this.#incoming) this.#inputs ??= this.#incoming.wire.inputs.map((t) => Tensor.fromWire(t));
    else this.#inputs ??= [...this.#init.inputs];
    return this.#inputs;
  }

  /**
   * The input named `name`, or undefined when the request left it out (only an optional input can
   * be). With the model's generated types (`Request` of `model-types.d.ts`) the name is checked
   * and the tensor typed at compile time: `request.input('TEXT').strings()`.
   */
  input<N extends keyof S['inputs'] & string>(name: N): InputTensor<S['inputs'][N]> {
    return this.inputs().find((t) => t.name === name) as InputTensor<S['inputs'][N]>;
  }

  requestedOutputNames(): string[] {
    return [...(this.#incoming ? this.#incoming.requestedOutputNames : (this.#init.requestedOutputNames ?? []))];
  }

  requestId(): string {
    return this.#incoming ? this.#incoming.wire.id : (this.#init.requestId ?? '');
  }

  /**
   * The sequence's correlation ID (`sequence_id`), 0 when none: a number, a bigint past 2^53, or a
   * string. With `sequence_batching`, requests of one sequence reach the same instance, in order,
   * so an instance can keep per-sequence state keyed by it (or use implicit state).
   */
  correlationId(): number | bigint | string {
    if (!this.#incoming) return this.#init.correlationId ?? 0;
    return this.#incoming.wire.sequence?.id ?? 0;
  }

  /** Request flags: TRITONSERVER_REQUEST_FLAG_SEQUENCE_START / _END of its sequence; 0 outside sequences. */
  flags(): number {
    if (!this.#incoming) return this.#init.flags ?? 0;
    const seq = this.#incoming.wire.sequence;
    if (!seq) return 0;
    return (seq.start ? TRITONSERVER_REQUEST_FLAG_SEQUENCE_START : 0) | (seq.end ? TRITONSERVER_REQUEST_FLAG_SEQUENCE_END : 0);
  }

  /** Queue timeout in microseconds (0 = none). */
  timeout(): number {
    return this.#incoming ? (this.#incoming.wire.timeoutUs ?? 0) : (this.#init.timeout ?? 0);
  }

  /** Request parameters as an object (Triton gives a JSON string; `JSON.stringify` it if you need that). */
  parameters(): Readonly<Record<string, ParameterValue>> {
    return { ...((this.#incoming ? this.#incoming.wire.parameters : this.#init.parameters) ?? {}) };
  }

  /** True once the client cancelled this request (or the instance is being torn down). */
  isCancelled(): boolean {
    return this.#incoming ? this.#incoming.isCancelled() : false;
  }

  /** The sender for decoupled responses (see {@link InferenceResponseSender}). */
  getResponseSender(): InferenceResponseSender {
    if (!this.#incoming) {
      throw new TritonError('getResponseSender() is only available on requests passed to execute()', TritonError.UNSUPPORTED);
    }
    return this.#incoming.sender();
  }

  /**
   * BLS: runs this request through the server (the callee's own scheduler and batcher). Never
   * throws for an inference failure: check `response.hasError()` as in Triton. With
   * `{ decoupled: true }` it returns a ResponseIterator: an async iterable over every response the
   * callee streams, ending (as Triton's iterator does when the final flag comes on its own) with an
   * empty response, or with an error response when the call failed; `cancel()` cancels the call.
   */
  exec(options: ExecOptions & { decoupled: true }): ResponseIterator;
  exec(options?: ExecOptions): Promise<InferenceResponse>;
  exec(options?: ExecOptions): Promise<InferenceResponse> | ResponseIterator {
    if (options?.decoupled) return this.#stream();
    return this.#call();
  }

  /** Same as `exec()`: JavaScript calls are asynchronous either way. */
  asyncExec(options: ExecOptions & { decoupled: true }): ResponseIterator;
  asyncExec(options?: ExecOptions): Promise<InferenceResponse>;
  asyncExec(options?: ExecOptions): Promise<InferenceResponse> | ResponseIterator {
    return options?.decoupled ? this.#stream() : this.#call();
  }

  #toWire(): WireInferRequest {
    const init = this.#init;
    const version = init.modelVersion !== undefined && init.modelVersion >= 0 ? init.modelVersion : undefined;
    const names = init.requestedOutputNames ?? [];
    return {
      id: init.requestId || `bls-${++blsCounter}`,
      model: init.modelName,
      ...(version !== undefined ? { version } : {}),
      inputs: this.inputs().map((t) => t.toWire()),
      ...(names.length > 0 ? { outputs: names.map((name) => ({ name })) } : {}),
      ...(init.parameters ? { parameters: { ...init.parameters } } : {}),
      ...(init.timeout ? { timeoutUs: init.timeout } : {}),
      ...(sequenceOf(init) ?? {}),
    };
  }

  async #call(): Promise<InferenceResponse> {
    if (this.#incoming) {
      return errorResponse(new TritonError('exec() is for requests built with new InferenceRequest({ modelName, ... })', TritonError.INVALID_ARG));
    }
    const link = runtimeLink();
    if (!link) return errorResponse(blsUnavailable());
    try {
      return toAuthorResponse(await link.infer(this.#toWire()));
    } catch (error) {
      return errorResponse(toTritonError(error));
    }
  }

  #stream(): ResponseIterator {
    if (this.#incoming) {
      return ResponseIterator.failed(new TritonError('exec() is for requests built with new InferenceRequest({ modelName, ... })', TritonError.INVALID_ARG));
    }
    const link = runtimeLink();
    if (!link?.inferStream) return ResponseIterator.failed(blsUnavailable());
    const inferStream = link.inferStream.bind(link);
    const wire = this.#toWire();
    return new ResponseIterator((sink) => inferStream(wire, sink));
  }
}

function blsUnavailable(): TritonError {
  return new TritonError('BLS is not available here: exec() needs a model running inside a Tritium server', TritonError.UNAVAILABLE);
}


/** Builds a request as `execute` receives it (instance runtime only). */
export function incomingRequest(state: IncomingRequestState): InferenceRequest {
  return new InferenceRequest({ modelName: state.wire.model, inputs: [], [INCOMING]: state });
}

/** `pb_utils.get_input_tensor_by_name(request, name)`: undefined when the request lacks it. */
export function getInputTensorByName(request: InferenceRequest, name: string): Tensor | undefined {
  return request.inputs().find((t) => t.name === name);
}
