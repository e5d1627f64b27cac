/**
 * `@tritium/core`: what an embedder needs to run models — `InferenceServer` and its options, the
 * request, response, tensor, error and config types, the logger. Each extension point has its own
 * entry (docs/architecture.md §3), as the subpaths below:
 * - `@tritium/core/backend`: the backend SPI and the helpers backends share;
 * - `@tritium/core/worker`: the worker host, for backends whose instances run in workers;
 * - `@tritium/core/repository`: the repository-source SPI and the local source;
 * - `@tritium/core/trace`: the tracer SPI;
 * - `@tritium/core/cache`: the response cache store SPI;
 * - `@tritium/core/config`: the config.pbtxt language (parse, normalize, validate, print);
 * - `@tritium/core/tensor`: datatype tables and the BYTES wire format;
 * - `@tritium/core/scheduler`: the schedulers, to drive one without a server;
 * - `@tritium/core/metrics`: custom metrics and latency summaries;
 * - `@tritium/core/server`: what a server around InferenceServer needs (model limits, Triton's
 *   metadata and tables, transport-side request checks);
 * - `@tritium/core/testing`: test backends, conformance suites, a manual clock.
 * Everything else is internal.
 */
export { InferenceServer } from './server/inference-server.ts';
export type { InferenceServerOptions, ModelControlMode } from './server/inference-server-options.ts';
export type * from './server/server-api.ts';
export type * from './types.ts';
export { InferError, ERROR_CODES } from './errors.ts';
export type { ErrorCode, WireError } from './errors.ts';
export type { Tensor } from './tensor/tensor.ts';
export { tensorFromTyped, tensorFromStrings, typedView } from './tensor/tensor.ts';
export { decodeStrings } from './tensor/bytes-elements.ts';
export type { DataType, DataTypeMap, TypedArray } from './tensor/data-type.ts';
export { DATA_TYPES, isDataType } from './tensor/data-type.ts';
export type {
  ModelConfig,
  Int64,
  BatchInput,
  BatchInputKind,
  BatchOutput,
  ModelDynamicBatching,
  ModelEnsembling,
  EnsembleStep,
  ModelInput,
  ModelOutput,
  TensorFormat,
  ModelTensorReshape,
  ModelInstanceGroup,
  InstanceGroupKind,
  SecondaryDevice,
  ModelOptimizationPolicy,
  OptimizationAccelerator,
  CudaGraphSpec,
  ModelParameter,
  ModelQueuePolicy,
  TimeoutAction,
  ModelRateLimiter,
  ModelRateLimiterResource,
  ModelSequenceBatching,
  SequenceControl,
  SequenceControlInput,
  SequenceControlKind,
  SequenceInitialState,
  SequenceState,
  ModelVersionPolicy,
  ModelWarmup,
  ModelWarmupInput,
  ModelRepositoryAgent,
  ModelMetricControl,
} from './config/model-config.ts';
export type { Logger, ModelLogLine } from './logger.ts';
export { silentLogger, logLines, logBlock, escapeControl } from './logger.ts';
