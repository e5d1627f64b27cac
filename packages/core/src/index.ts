/**
 * @tritium/core — the engine of Tritium: tensors, the config.pbtxt language, the model repository,
 * schedulers, the worker host and InferenceServer. No DI, no transports, no ONNX.
 */
export { InferError, ERROR_CODES } from './errors.ts';
export type { ErrorCode, WireError } from './errors.ts';
export * from './tensor/data-type.ts';
export * from './tensor/tensor.ts';
export * from './tensor/bytes-elements.ts';
export type * from './types.ts';
export type { RequestTrace, TraceActivity, TraceTensorActivity } from './trace/request-trace.ts';
export { traceNowNs, compositeTrace, reportCompute } from './trace/request-trace.ts';
export type * from './config/model-config.ts';
export { toNumber, emptyDynamicBatching } from './config/model-config.ts';
export { BACKEND_API_VERSION } from './backend/spi.ts';
export { instanceFailure, isInstanceFailure } from './backend/instance-failure.ts';
export type * from './backend/spi.ts';
export type { Logger } from './logger.ts';
export { silentLogger, logLines, logBlock, escapeControl } from './logger.ts';
export type { ModelLogLine } from './logger.ts';
export type { Scheduler, Clock } from './scheduler/scheduler.ts';
export { systemClock } from './scheduler/scheduler.ts';
export type * from './server/server-api.ts';
export type { StatsRecorder, FailureReason, ResponseOutcome } from './scheduler/stats-recorder.ts';
export { nullStatsRecorder } from './scheduler/stats-recorder.ts';
export { batchSizeOf, rowsOf, concatInputs, splitRows, splitOutputs } from './tensor/batch.ts';
export type { SplitOptions } from './tensor/batch.ts';
export { executeInGroups, answersOfRun, outputsToFetch } from './backend/grouped-execute.ts';
export { executeDecoupledToEnd } from './backend/decoupled-to-end.ts';
export type { GroupedExecuteOptions, RunMember, RunTimings } from './backend/grouped-execute.ts';
export { configTensorPlan } from './backend/config-tensor-plan.ts';
export { instanceWorkerOptions, type InstanceWorkerOptions } from './backend/instance-worker.ts';
export type { ConfigTensorPlan } from './backend/config-tensor-plan.ts';
export { PAD_PARAMETER_PREFIX, encodePadValue, paddingSpecFromConfig, padTensor, padBatch } from './tensor/pad.ts';
export { UNPAD_PARAMETER_PREFIX, unpaddingSpecFromConfig, trimTensor, unpadResponse } from './tensor/pad.ts';
export { createScheduler, isEnsembleConfig } from './scheduler/create-scheduler.ts';
export type { SchedulerDeps } from './scheduler/create-scheduler.ts';
export { DynamicBatcher } from './scheduler/dynamic-batcher.ts';
export { CANCELLED_MESSAGE } from './scheduler/batch-answers.ts';
export type { BatcherDeps } from './scheduler/dynamic-batcher.ts';
export { createDirectScheduler } from './scheduler/direct-scheduler.ts';
export { SequenceBatcher } from './scheduler/sequence/sequence-batcher.ts';
export type { SequenceBatcherDeps } from './scheduler/sequence/sequence-batcher.ts';
export { SequenceControls, sequenceTensors } from './scheduler/sequence/controls.ts';
export type { ControlFlags, SequenceTensorSpec } from './scheduler/sequence/controls.ts';
export { ImplicitState, loadInitialStates, INITIAL_STATE_FOLDER } from './scheduler/sequence/implicit-state.ts';
export type { InitialStateData, SequenceStateValues } from './scheduler/sequence/implicit-state.ts';
export { inSequence, correlationKey, formatCorrelationId } from './scheduler/sequence/correlation-id.ts';
export { batcherOptionsFromConfig, shapeKeyFor } from './scheduler/batcher-options.ts';
export type { BatcherOptions, QueuePolicy } from './scheduler/batcher-options.ts';
export { manualClock } from './scheduler/manual-clock.ts';
export { RateLimiter, RateLimitedSlot } from './scheduler/rate-limiter.ts';
export type { RateLimitResourceFlag } from './scheduler/rate-limiter.ts';
export { ResponseCache, MIN_RESPONSE_CACHE_BYTES } from './cache/response-cache.ts';
export type { CachedResponse, ResponseCacheStats } from './cache/response-cache.ts';
export { responseCacheKey } from './cache/cache-key.ts';
export type { ManualClock } from './scheduler/manual-clock.ts';
export { EnsembleScheduler } from './ensemble/runtime/ensemble-scheduler.ts';
export { createPipelineEnsemble, runPipelineBatch, PIPELINE_CONCURRENCY_PARAMETER } from './ensemble/runtime/pipeline-ensemble.ts';
export { runEnsemble, ensemblePrefix } from './ensemble/runtime/ensemble-run.ts';
export { spawnWorkerInstance } from './worker/worker-host.ts';
export { DEFAULT_MODEL_LOG_BYTES_PER_SEC } from './worker/model-output.ts';
export { restrictToSandbox, sandboxFileAccess } from './worker/sandbox-files.ts';
export { terminateWorkerThreads } from './worker/live-threads.ts';
export {
  ISOLATION_KEYS,
  DEFAULT_MEMORY_MB,
  isolationParameters,
  workerBounds,
  positiveIntParameter,
  durationParameter,
  boolParameter,
} from './worker/isolation-parameters.ts';
export type { Isolation, IsolationParameters, IsolationDefaults } from './worker/isolation-parameters.ts';
export { DEFAULT_MODEL_LIMITS, checkModelLimits, limitsApply } from './server/model-limits.ts';
export type { ModelLimits } from './server/model-limits.ts';
export { compiledModule } from './worker/compiled-module.ts';
export { SEND_CANCELLED_MESSAGE, SINK_WINDOW_BYTES } from './worker/sink-flow.ts';
export { processAlive, sweepStaleTemp } from './stale-temp.ts';
export { PROCESS_SANDBOX_GUARANTEES, SANDBOX_UID, probeSandboxHost } from './worker/process-sandbox.ts';
export type { SandboxGuarantee, SandboxGuaranteeId, SandboxHost } from './worker/process-sandbox.ts';
export type {
  WorkerInstanceOptions,
  WorkerInstance,
  WorkerPolicy,
  WorkerRestartPolicy,
  WorkerResourceLimits,
  WorkerContext,
  BlsStream,
  WorkerExecuteContext,
  WorkerModelInstance,
  WholeBatchOutput,
  WorkerExecuteOutput,
  CreateWorkerInstance,
} from './worker/types.ts';
export * from './config/index.ts';
export { InferenceServer } from './server/inference-server.ts';
export type { InferenceServerOptions, ModelControlMode } from './server/inference-server.ts';
export { ModelStats, EnsembleStats } from './server/model-stats.ts';
export type { LatencySnapshot, LatencySummaryName, TokenStats } from './server/model-stats.ts';
export { CustomMetrics, RESERVED_PREFIXES as CUSTOM_METRIC_RESERVED_PREFIXES } from './metrics/custom-metrics.ts';
export type { MetricOp, MetricKind, CustomFamilySnapshot, CustomMetricSnapshot } from './metrics/custom-metrics.ts';
export { DEFAULT_SUMMARY_QUANTILES, DEFAULT_FIRST_RESPONSE_BUCKETS, SlidingSummary, Histogram } from './metrics/latency-metrics.ts';
export type { LatencyMetricsOptions, SummarySnapshot, HistogramSnapshot } from './metrics/latency-metrics.ts';
export { validateRequest, requestTag, requestSpecOf, inputByteSizeMismatch } from './server/request-validation.ts';
export { parseModelVersion } from './server/model-version.ts';
export type { RequestSpec, RequestInputSpec, PlannedInput } from './server/request-validation.ts';
export { serverMetadata, modelMetadata, SERVER_EXTENSIONS, CORE_EXTENSION_GAPS, TRITON_COMPATIBLE_VERSION } from './server/server-metadata.ts';
export { formatTable } from './server/table-printer.ts';
export type { ServerExtension } from './server/server-metadata.ts';
export { ModelRepository } from './repository/model-repository.ts';
export type { ModelSource, ScanResult, ResolvedModel, ResolvedVersion, RepositoryOptions } from './repository/model-repository.ts';
export { defaultConfigCodec } from './repository/config-codec.ts';
export type {
  RepositorySource,
  RepositoryEntry,
  RepositoryEntryKind,
  RepositoryFetch,
  RepositoryCallOptions,
} from './repository/source/repository-source.ts';
export { localRepositorySource } from './repository/source/local-source.ts';
export { checkRelativePath } from './repository/source/relative-path.ts';
export { RepositoryMirror } from './repository/mirror/repository-mirror.ts';
export type { MirrorOptions, SyncResult } from './repository/mirror/repository-mirror.ts';
export type { ConfigCodec, NormalizeContext } from './repository/config-codec.ts';
export { selectVersions, parseVersionDirName } from './repository/version-policy.ts';
export { assertSafeModelName } from './repository/model-name.ts';
export { findBackend, backendNameOf } from './repository/backend-resolution.ts';
export { validateEnsembleModels } from './ensemble/validate/ensemble-models.ts';
export type { EnsembleValidation } from './ensemble/validate/ensemble-models.ts';
export { composingModels, findCircularDependency } from './ensemble/validate/ensemble-dependencies.ts';
export { runWarmup } from './warmup/run-warmup.ts';
export { warmupTensors } from './warmup/warmup-data.ts';
export { compareDimsSupported, shapeToString } from './backend/compare-dims.ts';
