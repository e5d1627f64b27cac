/**
 * @tritium/client — a typed client for Triton's protocols (KServe v2 over HTTP and gRPC),
 * organised like tritonclient: `http.InferenceServerClient`, `grpc.InferenceServerClient`,
 * `InferInput`, `InferRequestedOutput`, `InferResult`.
 */
import { HttpInferenceServerClient } from './http-client.ts';
import { GrpcInferenceServerClient } from './grpc-client.ts';

export { HttpInferenceServerClient } from './http-client.ts';
export type { HttpClientOptions, HttpInferOptions, HttpResponse } from './http-client.ts';
export { GrpcInferenceServerClient } from './grpc-client.ts';
export type { GrpcClientOptions, GrpcInferOptions, StreamCallback } from './grpc-client.ts';
export type { SequenceOptions } from './sequence-options.ts';
export type { ClientTlsOptions, PemSource } from './tls-options.ts';
export { InferInput, InferRequestedOutput } from './infer-input.ts';
export type { InputData } from './infer-input.ts';
export { InferResult } from './infer-result.ts';
export type { OutputTensor, InferResponseInfo } from './infer-result.ts';
export { InferenceServerException } from './errors.ts';
// The messages the clients' methods return (all of them: @tritium/client/proto).
export type {
  CudaSharedMemoryStatusResponseRegionStatus,
  ModelConfig,
  ModelConfigResponse,
  ModelMetadataResponse,
  ModelStatistics,
  ModelStatisticsResponse,
  RepositoryIndexResponseModelIndex,
  ServerMetadataResponse,
  StatisticDuration,
  SystemSharedMemoryStatusResponseRegionStatus,
} from './generated/grpc-types.ts';
export type * from './http-json.ts';
export type { Datatype, TypedArrayFor, TypedArrayClass } from './tensor-data.ts';
export { serializeBytes, deserializeBytes, ELEMENT_SIZE, TYPED_ARRAYS } from './tensor-data.ts';

/** `http.InferenceServerClient`, as `tritonclient.http`. */
export const http = { InferenceServerClient: HttpInferenceServerClient } as const;
/** `grpc.InferenceServerClient`, as `tritonclient.grpc`. */
export const grpc = { InferenceServerClient: GrpcInferenceServerClient } as const;
