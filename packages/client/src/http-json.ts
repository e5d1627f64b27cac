/**
 * The JSON bodies of Triton's HTTP protocol that have no gRPC twin: the inference request and response
 * headers (KServe v2 with Triton's binary extension) and the error body. Every other HTTP answer has
 * the shape of a gRPC message (generated/grpc-types.ts): the clients return those types for both.
 */

/** A parameter value in HTTP JSON (`parameters: { key: value }`). */
export type JsonParameterValue = string | number | boolean | bigint;

/** An input of an inference request's JSON header. */
export interface InferInputJson {
  name: string;
  shape: readonly number[];
  datatype: string;
  /** `binary_data_size` when the tensor's bytes follow the header (binary extension). */
  parameters?: Record<string, JsonParameterValue>;
  data?: readonly unknown[];
}

/** A requested output of an inference request's JSON header. */
export interface InferRequestedOutputJson {
  name: string;
  parameters?: Readonly<Record<string, JsonParameterValue>>;
}

/** An inference request's JSON header. */
export interface InferRequestJson {
  id?: string;
  parameters?: Record<string, JsonParameterValue>;
  inputs: InferInputJson[];
  outputs?: InferRequestedOutputJson[];
}

/** An output of an inference response's JSON header. */
export interface InferOutputJson {
  name: string;
  datatype: string;
  shape: number[];
  /** `binary_data_size` when the output's bytes follow the header. */
  parameters?: Record<string, unknown>;
  data?: unknown[];
}

/** An inference response's JSON header. */
export interface InferResponseJson {
  model_name: string;
  model_version: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs?: InferOutputJson[];
}

/** Triton's error body: `{"error": "..."}`. */
export interface ErrorJson {
  error?: unknown;
}
