/**
 * `inference.ModelConfig` (Triton's model_config.proto) as a typed object. Field names are the
 * proto's own (snake_case), so the object *is* Triton's JSON form (preserve_proto_field_names) and
 * no hand-kept name table sits between the two. Enums are their names. After normalization every
 * scalar and repeated field is present with Triton's default; sub-messages that are unset stay absent.
 *
 * 64-bit integer fields are `number` when they fit in a double exactly and `bigint` beyond that
 * (`18446744073709551615` survives a round trip); use `toNumber()` where a magnitude is needed.
 */
import type { ConfigDataType } from '../tensor/data-type.ts';

export type Int64 = number | bigint;

export type TensorFormat = 'FORMAT_NONE' | 'FORMAT_NHWC' | 'FORMAT_NCHW';

export interface ModelTensorReshape {
  shape: number[];
}

export interface ModelInput {
  name: string;
  data_type: ConfigDataType;
  format: TensorFormat;
  dims: number[];
  reshape?: ModelTensorReshape;
  is_shape_tensor: boolean;
  allow_ragged_batch: boolean;
  optional: boolean;
  is_non_linear_format_io: boolean;
}

export interface ModelOutput {
  name: string;
  data_type: ConfigDataType;
  dims: number[];
  reshape?: ModelTensorReshape;
  label_filename: string;
  is_shape_tensor: boolean;
  is_non_linear_format_io: boolean;
}

export type BatchInputKind =
  | 'BATCH_ELEMENT_COUNT'
  | 'BATCH_ACCUMULATED_ELEMENT_COUNT'
  | 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'
  | 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE'
  | 'BATCH_ITEM_SHAPE'
  | 'BATCH_ITEM_SHAPE_FLATTEN';

export interface BatchInput {
  kind: BatchInputKind;
  target_name: string[];
  data_type: ConfigDataType;
  source_input: string[];
}

export interface BatchOutput {
  target_name: string[];
  kind: 'BATCH_SCATTER_WITH_INPUT_SHAPE';
  source_input: string[];
}

export interface ModelVersionPolicy {
  latest?: { num_versions: number };
  all?: Record<string, never>;
  specific?: { versions: number[] };
}

export type InstanceGroupKind = 'KIND_AUTO' | 'KIND_GPU' | 'KIND_CPU' | 'KIND_MODEL';

export interface ModelRateLimiterResource {
  name: string;
  global: boolean;
  count: number;
}

export interface ModelRateLimiter {
  resources: ModelRateLimiterResource[];
  priority: number;
}

export interface SecondaryDevice {
  kind: 'KIND_NVDLA';
  device_id: Int64;
}

export interface ModelInstanceGroup {
  name: string;
  kind: InstanceGroupKind;
  count: number;
  rate_limiter?: ModelRateLimiter;
  gpus: number[];
  secondary_devices: SecondaryDevice[];
  profile: string[];
  passive: boolean;
  host_policy: string;
}

export type TimeoutAction = 'REJECT' | 'DELAY';

export interface ModelQueuePolicy {
  timeout_action: TimeoutAction;
  default_timeout_microseconds: Int64;
  allow_timeout_override: boolean;
  max_queue_size: number;
}

export interface ModelDynamicBatching {
  preferred_batch_size: number[];
  max_queue_delay_microseconds: Int64;
  preserve_ordering: boolean;
  priority_levels: Int64;
  default_priority_level: Int64;
  default_queue_policy?: ModelQueuePolicy;
  /** Map keys are priority levels, as decimal strings (JSON map keys). */
  priority_queue_policy: Record<string, ModelQueuePolicy>;
}

export type SequenceControlKind =
  | 'CONTROL_SEQUENCE_START'
  | 'CONTROL_SEQUENCE_READY'
  | 'CONTROL_SEQUENCE_END'
  | 'CONTROL_SEQUENCE_CORRID';

export interface SequenceControl {
  kind: SequenceControlKind;
  int32_false_true: number[];
  fp32_false_true: number[];
  bool_false_true: boolean[];
  data_type: ConfigDataType;
}

export interface SequenceControlInput {
  name: string;
  control: SequenceControl[];
}

export interface SequenceInitialState {
  data_type: ConfigDataType;
  dims: number[];
  zero_data?: boolean;
  data_file?: string;
  name: string;
}

export interface SequenceState {
  input_name: string;
  output_name: string;
  data_type: ConfigDataType;
  dims: number[];
  initial_state: SequenceInitialState[];
  use_same_buffer_for_input_output: boolean;
  use_growable_memory: boolean;
}

export interface ModelSequenceBatching {
  direct?: { max_queue_delay_microseconds: Int64; minimum_slot_utilization: number };
  oldest?: {
    max_candidate_sequences: number;
    preferred_batch_size: number[];
    max_queue_delay_microseconds: Int64;
    preserve_ordering: boolean;
  };
  max_sequence_idle_microseconds: Int64;
  control_input: SequenceControlInput[];
  state: SequenceState[];
  iterative_sequence: boolean;
}

export interface EnsembleStep {
  model_name: string;
  model_version: Int64;
  /** key = composing model's input name, value = ensemble tensor name. */
  input_map: Record<string, string>;
  /** key = composing model's output name, value = ensemble tensor name. */
  output_map: Record<string, string>;
  model_namespace: string;
}

export interface ModelEnsembling {
  step: EnsembleStep[];
  max_inflight_requests: number;
}

export interface ModelParameter {
  string_value: string;
}

export interface ModelWarmupInput {
  data_type: ConfigDataType;
  dims: number[];
  zero_data?: boolean;
  random_data?: boolean;
  input_data_file?: string;
}

export interface ModelWarmup {
  name: string;
  batch_size: number;
  inputs: Record<string, ModelWarmupInput>;
  count: number;
}

export interface OptimizationAccelerator {
  name: string;
  parameters: Record<string, string>;
}

export interface CudaGraphSpec {
  batch_size: number;
  input: Record<string, { dim: Int64[] }>;
  graph_lower_bound?: { batch_size: number; input: Record<string, { dim: Int64[] }> };
}

export interface ModelOptimizationPolicy {
  graph?: { level: number };
  priority: 'PRIORITY_DEFAULT' | 'PRIORITY_MAX' | 'PRIORITY_MIN';
  cuda?: { graphs: boolean; busy_wait_events: boolean; graph_spec: CudaGraphSpec[]; output_copy_stream: boolean };
  execution_accelerators?: {
    gpu_execution_accelerator: OptimizationAccelerator[];
    cpu_execution_accelerator: OptimizationAccelerator[];
  };
  input_pinned_memory?: { enable: boolean };
  output_pinned_memory?: { enable: boolean };
  gather_kernel_buffer_threshold: number;
  eager_batching: boolean;
}

export interface ModelRepositoryAgent {
  name: string;
  parameters: Record<string, string>;
}

export interface ModelMetricControl {
  metric_identifier?: { family: string };
  histogram_options?: { buckets: number[] };
}

export interface ModelConfig {
  name: string;
  platform: string;
  backend: string;
  runtime: string;
  version_policy?: ModelVersionPolicy;
  max_batch_size: number;
  input: ModelInput[];
  output: ModelOutput[];
  batch_input: BatchInput[];
  batch_output: BatchOutput[];
  optimization?: ModelOptimizationPolicy;
  dynamic_batching?: ModelDynamicBatching;
  sequence_batching?: ModelSequenceBatching;
  ensemble_scheduling?: ModelEnsembling;
  instance_group: ModelInstanceGroup[];
  default_model_filename: string;
  cc_model_filenames: Record<string, string>;
  metric_tags: Record<string, string>;
  parameters: Record<string, ModelParameter>;
  model_warmup: ModelWarmup[];
  model_operations?: { op_library_filename: string[] };
  model_transaction_policy?: { decoupled: boolean };
  model_repository_agents?: { agents: ModelRepositoryAgent[] };
  response_cache?: { enable: boolean };
  model_metrics?: { metric_control: ModelMetricControl[] };
}

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
