/**
 * `inference.ModelConfig` (Triton's model_config.proto) as a typed object, generated from
 * `packages/client/proto/model_config.proto` into `generated/model-config-types.ts`. Field names are the
 * proto's own (snake_case), so the object *is* Triton's JSON form (preserve_proto_field_names) and
 * no hand-kept name table sits between the two. Enums are their names. After normalization every
 * scalar and repeated field is present with Triton's default; sub-messages that are unset stay absent.
 *
 * 64-bit integer fields are `number` when they fit in a double exactly and `bigint` beyond that
 * (`18446744073709551615` survives a round trip); use `toNumber()` where a magnitude is needed.
 */
import type {
  Int64,
  ModelDynamicBatching,
  ModelEnsemblingStep,
  ModelInputFormat,
  ModelInstanceGroupKind,
  ModelInstanceGroupSecondaryDevice,
  ModelMetricsMetricControl,
  ModelOptimizationPolicyCudaGraphSpec,
  ModelOptimizationPolicyExecutionAcceleratorsAccelerator,
  ModelQueuePolicyTimeoutAction,
  ModelRepositoryAgentsAgent,
  ModelSequenceBatchingControl,
  ModelSequenceBatchingControlInput,
  ModelSequenceBatchingControlKind,
  ModelSequenceBatchingInitialState,
  ModelSequenceBatchingState,
} from './generated/model-config-types.ts';

export type {
  BatchInput,
  BatchInputKind,
  BatchOutput,
  Int64,
  ModelConfig,
  ModelDynamicBatching,
  ModelEnsembling,
  ModelInput,
  ModelInstanceGroup,
  ModelOptimizationPolicy,
  ModelOutput,
  ModelParameter,
  ModelQueuePolicy,
  ModelRateLimiter,
  ModelRateLimiterResource,
  ModelSequenceBatching,
  ModelTensorReshape,
  ModelVersionPolicy,
  ModelWarmup,
  ModelWarmupInput,
} from './generated/model-config-types.ts';

// Shorter names the rest of the code base uses for nested messages and enums.
export type TensorFormat = ModelInputFormat;
export type InstanceGroupKind = ModelInstanceGroupKind;
export type SecondaryDevice = ModelInstanceGroupSecondaryDevice;
export type TimeoutAction = ModelQueuePolicyTimeoutAction;
export type SequenceControlKind = ModelSequenceBatchingControlKind;
export type SequenceControl = ModelSequenceBatchingControl;
export type SequenceControlInput = ModelSequenceBatchingControlInput;
export type SequenceInitialState = ModelSequenceBatchingInitialState;
export type SequenceState = ModelSequenceBatchingState;
export type EnsembleStep = ModelEnsemblingStep;
export type OptimizationAccelerator = ModelOptimizationPolicyExecutionAcceleratorsAccelerator;
export type CudaGraphSpec = ModelOptimizationPolicyCudaGraphSpec;
export type ModelRepositoryAgent = ModelRepositoryAgentsAgent;
export type ModelMetricControl = ModelMetricsMetricControl;

/** A 64-bit config value as a JS number (values past 2^53 lose precision; callers use it as a magnitude). */
export function toNumber(value: Int64): number {
  return typeof value === 'bigint' ? Number(value) : value;
}

/**
 * `dynamic_batching {}` as Triton's auto-complete adds it (every field at its proto default):
 * what ONNX, TensorRT and model.ts auto-complete set when a batching model names no scheduler.
 */
export function emptyDynamicBatching(): ModelDynamicBatching {
  return {
    preferred_batch_size: [],
    max_queue_delay_microseconds: 0,
    preserve_ordering: false,
    priority_levels: 0,
    default_priority_level: 0,
    priority_queue_policy: {},
  };
}
