/** The types of `@tritium/backend-python-like/testing`: requests in, responses and log lines out, typed by a model's Spec. */
import type { DataType, InferRequest, InferResponse, ModelConfig, ParameterValue } from '@tritium/core';
import type { ModelSpec, OutputData } from '../model-api/model-spec.ts';
import type { Tensor } from '../model-api/tensor.ts';
import type { TritonError } from '../model-api/errors.ts';

/** One element of an input of datatype D, as a test writes it. */
export type TestElement<D extends DataType> = D extends 'BYTES' ? string : D extends 'BOOL' ? boolean : D extends 'INT64' | 'UINT64' ? bigint | number : number;

/** Nested arrays of elements (the shape is inferred, then read as the config implies). */
export type NestedElements<E> = E | readonly NestedElements<E>[];

/**
 * An input value: a typed array of its datatype (or strings for BYTES), nested arrays of elements,
 * or `{ shape, data }`. Nested arrays and typed arrays are read in the shape the config implies:
 * for dims [1] with batching, `['a', 'b']` is two rows ([2, 1]).
 */
export type TestInput<D extends DataType> =
  | OutputData<D>
  | NestedElements<TestElement<D>>
  | { readonly shape: readonly number[]; readonly data: OutputData<D> | readonly TestElement<D>[] };

type Required<S extends ModelSpec> = { [K in keyof S['inputs'] & string]: S['inputs'][K]['optional'] extends false ? K : never }[keyof S['inputs'] & string];
type Optional<S extends ModelSpec> = Exclude<keyof S['inputs'] & string, Required<S>>;

/** One request: its inputs by name (a required input must be there, as the server requires). */
export type TestRequest<S extends ModelSpec = ModelSpec> = { readonly [K in Required<S>]: TestInput<S['inputs'][K]['datatype']> } & {
  readonly [K in Optional<S>]?: TestInput<S['inputs'][K]['datatype']>;
};

/** One response: its outputs by name (the author API's Tensor), its parameters, or the error that failed the request. */
export interface TestResponse<S extends ModelSpec = ModelSpec> {
  readonly outputs: { readonly [K in keyof S['outputs'] & string]: Tensor<S['outputs'][K]['datatype']> };
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  readonly error?: TritonError;
}

/** A line the model logged (`Logger.logInfo` ...) or printed (`console.log` goes to the test's own output, not here). */
export interface TestLogLine {
  readonly level: 'error' | 'warn' | 'info' | 'verbose';
  readonly message: string;
}

export interface TestResult<S extends ModelSpec = ModelSpec> {
  /** One per request, in order. */
  readonly responses: TestResponse<S>[];
  /** The lines the model logged during this call. */
  readonly logs: TestLogLine[];
}

export interface TestStreamResult<S extends ModelSpec = ModelSpec> {
  /** Per request, every response it streamed, in order (an error response ends its request). */
  readonly responses: TestResponse<S>[][];
  readonly logs: TestLogLine[];
}

/** A BLS call the model makes (`new InferenceRequest({ modelName, ... }).exec()`), as the server would get it. */
export type BlsCall = Omit<InferRequest, 'signal' | 'callers'>;

export interface LoadModelOptions {
  /** The version folder to load (default: the highest numbered one). */
  readonly version?: number;
  /** Answers the model's BLS calls; without it each call's response is an UNAVAILABLE error. */
  readonly bls?: (call: BlsCall) => InferResponse | Promise<InferResponse>;
  /** Folder for the model's bundle (default the backend's, private to this user). */
  readonly cacheDir?: string;
}

export interface TestModel<S extends ModelSpec = ModelSpec> {
  /** The config as loaded (normalized; completed by the model's `autoCompleteConfig` when it has one). */
  readonly config: ModelConfig;
  readonly version: number;
  /** Every line logged since the model was loaded, `initialize`'s included. */
  readonly logs: readonly TestLogLine[];
  /**
   * Runs ONE `execute` with these requests (a batch, as the dynamic batcher would form it), checks
   * them and the outputs as the server does, and resolves with a response per request. Rejects
   * with the error when the model's `execute` throws (the whole call fails, as on a server).
   */
  execute(requests: readonly TestRequest<S>[]): Promise<TestResult<S>>;
  /** A decoupled model: one `execute`, resolving once every request got its final flag. */
  executeDecoupled(requests: readonly TestRequest<S>[]): Promise<TestStreamResult<S>>;
  /** Runs `finalize` and removes the bundle. */
  finalize(): Promise<void>;
}
