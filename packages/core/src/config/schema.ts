/**
 * The schema of `inference.ModelConfig` (common:protobuf/model_config.proto) as data: every message,
 * field name, field number, type, label (singular / repeated / map) and oneof, plus every enum.
 * The text parser, the JSON printer/reader and the text printer are all driven by this one table,
 * so adding a field means adding one line here, to `model-config.ts` and to the vendored
 * `packages/client/proto/model_config.proto`: `apps/server/test/config-schema-agreement.test.ts`
 * fails until all three agree.
 *
 * Fields are listed in the proto's *declaration* order: that is the order protobuf's JSON printer
 * (and Triton's `GET /v2/models/<m>/config`) writes them in.
 */
import { CONFIG_DATA_TYPES } from '../tensor/data-type.ts';

export type ScalarType = 'string' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'double';

/** What one value of a field is: a scalar, an enum (by name) or a message. */
export type ValueType =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'enum'; readonly enumName: string }
  | { readonly kind: 'message'; readonly messageName: string };

export interface FieldDescriptor {
  readonly name: string;
  readonly number: number;
  readonly label: 'singular' | 'repeated' | 'map';
  /** For a map, the type of the values. */
  readonly value: ValueType;
  /** For a map, the key type (always a string or integer scalar). */
  readonly mapKey?: ScalarType;
  /** Name of the oneof this field belongs to, if any. */
  readonly oneof?: string;
  /**
   * 64-bit fields Triton rewrites from JSON strings to JSON numbers (ModelConfigToJson's Fix* calls).
   * Any other 64-bit field stays a string, as protobuf prints it.
   */
  readonly jsonNumber?: boolean;
}

export interface MessageDescriptor {
  /** Full name, e.g. `inference.ModelConfig`. */
  readonly name: string;
  readonly fields: readonly FieldDescriptor[];
  readonly byName: ReadonlyMap<string, FieldDescriptor>;
  /** Also accepts lowerCamelCase JSON names (protobuf's JSON parser takes both). */
  readonly byJsonName: ReadonlyMap<string, FieldDescriptor>;
}

export interface EnumDescriptor {
  readonly name: string;
  /** Value names in declaration order; the first is the proto3 default (number 0). */
  readonly values: readonly string[];
  readonly byName: ReadonlyMap<string, number>;
  readonly byNumber: ReadonlyMap<number, string>;
}

// ---- enums -------------------------------------------------------------------------------------

function enumOf(name: string, values: Record<string, number>): EnumDescriptor {
  const entries = Object.entries(values);
  return {
    name,
    values: entries.map(([n]) => n),
    byName: new Map(entries),
    byNumber: new Map(entries.map(([n, v]) => [v, n])),
  };
}

const ENUM_LIST: EnumDescriptor[] = [
  // The config's datatype names come from the one datatype table (tensor/data-type.ts).
  enumOf('inference.DataType', CONFIG_DATA_TYPES),
  enumOf('inference.ModelInstanceGroup.Kind', { KIND_AUTO: 0, KIND_GPU: 1, KIND_CPU: 2, KIND_MODEL: 3 }),
  enumOf('inference.ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind', { KIND_NVDLA: 0 }),
  enumOf('inference.ModelInput.Format', { FORMAT_NONE: 0, FORMAT_NHWC: 1, FORMAT_NCHW: 2 }),
  enumOf('inference.BatchInput.Kind', {
    BATCH_ELEMENT_COUNT: 0,
    BATCH_ACCUMULATED_ELEMENT_COUNT: 1,
    BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO: 2,
    BATCH_MAX_ELEMENT_COUNT_AS_SHAPE: 3,
    BATCH_ITEM_SHAPE: 4,
    BATCH_ITEM_SHAPE_FLATTEN: 5,
  }),
  enumOf('inference.BatchOutput.Kind', { BATCH_SCATTER_WITH_INPUT_SHAPE: 0 }),
  enumOf('inference.ModelOptimizationPolicy.ModelPriority', {
    PRIORITY_DEFAULT: 0,
    PRIORITY_MAX: 1,
    PRIORITY_MIN: 2,
  }),
  enumOf('inference.ModelQueuePolicy.TimeoutAction', { REJECT: 0, DELAY: 1 }),
  enumOf('inference.ModelSequenceBatching.Control.Kind', {
    CONTROL_SEQUENCE_START: 0,
    CONTROL_SEQUENCE_READY: 1,
    CONTROL_SEQUENCE_END: 2,
    CONTROL_SEQUENCE_CORRID: 3,
  }),
];

export const ENUMS: ReadonlyMap<string, EnumDescriptor> = new Map(ENUM_LIST.map((e) => [e.name, e]));

// ---- messages ----------------------------------------------------------------------------------

interface FieldOptions {
  oneof?: string;
  jsonNumber?: boolean;
}

const S = (scalar: ScalarType): ValueType => ({ kind: 'scalar', scalar });
const E = (enumName: string): ValueType => ({ kind: 'enum', enumName: `inference.${enumName}` });
const M = (messageName: string): ValueType => ({ kind: 'message', messageName: `inference.${messageName}` });

function one(name: string, num: number, value: ValueType, opts: FieldOptions = {}): FieldDescriptor {
  return { name, number: num, label: 'singular', value, ...opts };
}
function rep(name: string, num: number, value: ValueType, opts: FieldOptions = {}): FieldDescriptor {
  return { name, number: num, label: 'repeated', value, ...opts };
}
function map(name: string, num: number, key: ScalarType, value: ValueType): FieldDescriptor {
  return { name, number: num, label: 'map', value, mapKey: key };
}

const STR = S('string');
const BOOL = S('bool');
const I32 = S('int32');
const U32 = S('uint32');
const I64 = S('int64');
const U64 = S('uint64');
const DT = E('DataType');
const NUM = { jsonNumber: true } as const;

const MESSAGE_LIST: Array<[string, FieldDescriptor[]]> = [
  ['ModelRateLimiter.Resource', [one('name', 1, STR), one('global', 2, BOOL), one('count', 3, U32)]],
  ['ModelRateLimiter', [rep('resources', 1, M('ModelRateLimiter.Resource')), one('priority', 2, U32)]],
  [
    'ModelInstanceGroup.SecondaryDevice',
    [one('kind', 1, E('ModelInstanceGroup.SecondaryDevice.SecondaryDeviceKind')), one('device_id', 2, I64)],
  ],
  [
    'ModelInstanceGroup',
    [
      one('name', 1, STR),
      one('kind', 4, E('ModelInstanceGroup.Kind')),
      one('count', 2, I32),
      one('rate_limiter', 6, M('ModelRateLimiter')),
      rep('gpus', 3, I32),
      rep('secondary_devices', 8, M('ModelInstanceGroup.SecondaryDevice')),
      rep('profile', 5, STR),
      one('passive', 7, BOOL),
      one('host_policy', 9, STR),
    ],
  ],
  ['ModelTensorReshape', [rep('shape', 1, I64, NUM)]],
  [
    'ModelInput',
    [
      one('name', 1, STR),
      one('data_type', 2, DT),
      one('format', 3, E('ModelInput.Format')),
      rep('dims', 4, I64, NUM),
      one('reshape', 5, M('ModelTensorReshape')),
      one('is_shape_tensor', 6, BOOL),
      one('allow_ragged_batch', 7, BOOL),
      one('optional', 8, BOOL),
      one('is_non_linear_format_io', 9, BOOL),
    ],
  ],
  [
    'ModelOutput',
    [
      one('name', 1, STR),
      one('data_type', 2, DT),
      rep('dims', 3, I64, NUM),
      one('reshape', 5, M('ModelTensorReshape')),
      one('label_filename', 4, STR),
      one('is_shape_tensor', 6, BOOL),
      one('is_non_linear_format_io', 7, BOOL),
    ],
  ],
  [
    'BatchInput',
    [
      one('kind', 1, E('BatchInput.Kind')),
      rep('target_name', 2, STR),
      one('data_type', 3, DT),
      rep('source_input', 4, STR),
    ],
  ],
  ['BatchOutput', [rep('target_name', 1, STR), one('kind', 2, E('BatchOutput.Kind')), rep('source_input', 3, STR)]],
  ['ModelVersionPolicy.Latest', [one('num_versions', 1, U32)]],
  ['ModelVersionPolicy.All', []],
  ['ModelVersionPolicy.Specific', [rep('versions', 1, I64, NUM)]],
  [
    'ModelVersionPolicy',
    [
      one('latest', 1, M('ModelVersionPolicy.Latest'), { oneof: 'policy_choice' }),
      one('all', 2, M('ModelVersionPolicy.All'), { oneof: 'policy_choice' }),
      one('specific', 3, M('ModelVersionPolicy.Specific'), { oneof: 'policy_choice' }),
    ],
  ],
  ['ModelOptimizationPolicy.Graph', [one('level', 1, I32)]],
  ['ModelOptimizationPolicy.Cuda.GraphSpec.Shape', [rep('dim', 1, I64)]],
  [
    'ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound',
    [one('batch_size', 1, I32), map('input', 2, 'string', M('ModelOptimizationPolicy.Cuda.GraphSpec.Shape'))],
  ],
  [
    'ModelOptimizationPolicy.Cuda.GraphSpec',
    [
      one('batch_size', 1, I32),
      map('input', 2, 'string', M('ModelOptimizationPolicy.Cuda.GraphSpec.Shape')),
      one('graph_lower_bound', 3, M('ModelOptimizationPolicy.Cuda.GraphSpec.LowerBound')),
    ],
  ],
  [
    'ModelOptimizationPolicy.Cuda',
    [
      one('graphs', 1, BOOL),
      one('busy_wait_events', 2, BOOL),
      rep('graph_spec', 3, M('ModelOptimizationPolicy.Cuda.GraphSpec')),
      one('output_copy_stream', 4, BOOL),
    ],
  ],
  [
    'ModelOptimizationPolicy.ExecutionAccelerators.Accelerator',
    [one('name', 1, STR), map('parameters', 2, 'string', STR)],
  ],
  [
    'ModelOptimizationPolicy.ExecutionAccelerators',
    [
      rep('gpu_execution_accelerator', 1, M('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator')),
      rep('cpu_execution_accelerator', 2, M('ModelOptimizationPolicy.ExecutionAccelerators.Accelerator')),
    ],
  ],
  ['ModelOptimizationPolicy.PinnedMemoryBuffer', [one('enable', 1, BOOL)]],
  [
    'ModelOptimizationPolicy',
    [
      one('graph', 1, M('ModelOptimizationPolicy.Graph')),
      one('priority', 2, E('ModelOptimizationPolicy.ModelPriority')),
      one('cuda', 3, M('ModelOptimizationPolicy.Cuda')),
      one('execution_accelerators', 4, M('ModelOptimizationPolicy.ExecutionAccelerators')),
      one('input_pinned_memory', 5, M('ModelOptimizationPolicy.PinnedMemoryBuffer')),
      one('output_pinned_memory', 6, M('ModelOptimizationPolicy.PinnedMemoryBuffer')),
      one('gather_kernel_buffer_threshold', 7, U32),
      one('eager_batching', 8, BOOL),
    ],
  ],
  [
    'ModelQueuePolicy',
    [
      one('timeout_action', 1, E('ModelQueuePolicy.TimeoutAction')),
      one('default_timeout_microseconds', 2, U64, NUM),
      one('allow_timeout_override', 3, BOOL),
      one('max_queue_size', 4, U32),
    ],
  ],
  [
    'ModelDynamicBatching',
    [
      rep('preferred_batch_size', 1, I32),
      one('max_queue_delay_microseconds', 2, U64, NUM),
      one('preserve_ordering', 3, BOOL),
      one('priority_levels', 4, U64, NUM),
      one('default_priority_level', 5, U64, NUM),
      one('default_queue_policy', 6, M('ModelQueuePolicy')),
      map('priority_queue_policy', 7, 'uint64', M('ModelQueuePolicy')),
    ],
  ],
  [
    'ModelSequenceBatching.Control',
    [
      one('kind', 1, E('ModelSequenceBatching.Control.Kind')),
      rep('int32_false_true', 2, I32),
      rep('fp32_false_true', 3, S('float')),
      rep('bool_false_true', 5, BOOL),
      one('data_type', 4, DT),
    ],
  ],
  ['ModelSequenceBatching.ControlInput', [one('name', 1, STR), rep('control', 2, M('ModelSequenceBatching.Control'))]],
  [
    'ModelSequenceBatching.InitialState',
    [
      one('data_type', 1, DT),
      // Triton's ModelConfigToJson looks for `initial_state` in the wrong object, so these dims stay strings.
      rep('dims', 2, I64),
      one('zero_data', 3, BOOL, { oneof: 'state_data' }),
      one('data_file', 4, STR, { oneof: 'state_data' }),
      one('name', 5, STR),
    ],
  ],
  [
    'ModelSequenceBatching.State',
    [
      one('input_name', 1, STR),
      one('output_name', 2, STR),
      one('data_type', 3, DT),
      rep('dims', 4, I64, NUM),
      rep('initial_state', 5, M('ModelSequenceBatching.InitialState')),
      one('use_same_buffer_for_input_output', 6, BOOL),
      one('use_growable_memory', 7, BOOL),
    ],
  ],
  [
    'ModelSequenceBatching.StrategyDirect',
    [one('max_queue_delay_microseconds', 1, U64, NUM), one('minimum_slot_utilization', 2, S('float'))],
  ],
  [
    'ModelSequenceBatching.StrategyOldest',
    [
      one('max_candidate_sequences', 1, I32),
      rep('preferred_batch_size', 2, I32),
      one('max_queue_delay_microseconds', 3, U64, NUM),
      one('preserve_ordering', 4, BOOL),
    ],
  ],
  [
    'ModelSequenceBatching',
    [
      one('direct', 3, M('ModelSequenceBatching.StrategyDirect'), { oneof: 'strategy_choice' }),
      one('oldest', 4, M('ModelSequenceBatching.StrategyOldest'), { oneof: 'strategy_choice' }),
      one('max_sequence_idle_microseconds', 1, U64, NUM),
      rep('control_input', 2, M('ModelSequenceBatching.ControlInput')),
      rep('state', 5, M('ModelSequenceBatching.State')),
      one('iterative_sequence', 6, BOOL),
    ],
  ],
  [
    'ModelEnsembling.Step',
    [
      one('model_name', 1, STR),
      one('model_version', 2, I64, NUM),
      map('input_map', 3, 'string', STR),
      map('output_map', 4, 'string', STR),
      one('model_namespace', 5, STR),
    ],
  ],
  ['ModelEnsembling', [rep('step', 1, M('ModelEnsembling.Step')), one('max_inflight_requests', 2, U32)]],
  ['ModelParameter', [one('string_value', 1, STR)]],
  [
    'ModelWarmup.Input',
    [
      one('data_type', 1, DT),
      rep('dims', 2, I64, NUM),
      one('zero_data', 3, BOOL, { oneof: 'input_data_type' }),
      one('random_data', 4, BOOL, { oneof: 'input_data_type' }),
      one('input_data_file', 5, STR, { oneof: 'input_data_type' }),
    ],
  ],
  [
    'ModelWarmup',
    [
      one('name', 1, STR),
      one('batch_size', 2, U32),
      map('inputs', 3, 'string', M('ModelWarmup.Input')),
      one('count', 4, U32),
    ],
  ],
  ['ModelOperations', [rep('op_library_filename', 1, STR)]],
  ['ModelTransactionPolicy', [one('decoupled', 1, BOOL)]],
  ['ModelRepositoryAgents.Agent', [one('name', 1, STR), map('parameters', 2, 'string', STR)]],
  ['ModelRepositoryAgents', [rep('agents', 1, M('ModelRepositoryAgents.Agent'))]],
  ['ModelResponseCache', [one('enable', 1, BOOL)]],
  ['ModelMetrics.MetricControl.MetricIdentifier', [one('family', 1, STR)]],
  ['ModelMetrics.MetricControl.HistogramOptions', [rep('buckets', 1, S('double'))]],
  [
    'ModelMetrics.MetricControl',
    [
      one('metric_identifier', 1, M('ModelMetrics.MetricControl.MetricIdentifier')),
      one('histogram_options', 2, M('ModelMetrics.MetricControl.HistogramOptions'), { oneof: 'metric_options' }),
    ],
  ],
  ['ModelMetrics', [rep('metric_control', 1, M('ModelMetrics.MetricControl'))]],
  [
    'ModelConfig',
    [
      one('name', 1, STR),
      one('platform', 2, STR),
      one('backend', 17, STR),
      one('runtime', 25, STR),
      one('version_policy', 3, M('ModelVersionPolicy')),
      one('max_batch_size', 4, I32),
      rep('input', 5, M('ModelInput')),
      rep('output', 6, M('ModelOutput')),
      rep('batch_input', 20, M('BatchInput')),
      rep('batch_output', 21, M('BatchOutput')),
      one('optimization', 12, M('ModelOptimizationPolicy')),
      one('dynamic_batching', 11, M('ModelDynamicBatching'), { oneof: 'scheduling_choice' }),
      one('sequence_batching', 13, M('ModelSequenceBatching'), { oneof: 'scheduling_choice' }),
      one('ensemble_scheduling', 15, M('ModelEnsembling'), { oneof: 'scheduling_choice' }),
      rep('instance_group', 7, M('ModelInstanceGroup')),
      one('default_model_filename', 8, STR),
      map('cc_model_filenames', 9, 'string', STR),
      map('metric_tags', 10, 'string', STR),
      map('parameters', 14, 'string', M('ModelParameter')),
      rep('model_warmup', 16, M('ModelWarmup')),
      one('model_operations', 18, M('ModelOperations')),
      one('model_transaction_policy', 19, M('ModelTransactionPolicy')),
      one('model_repository_agents', 23, M('ModelRepositoryAgents')),
      one('response_cache', 24, M('ModelResponseCache')),
      one('model_metrics', 26, M('ModelMetrics')),
    ],
  ],
];

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export const MESSAGES: ReadonlyMap<string, MessageDescriptor> = new Map(
  MESSAGE_LIST.map(([short, fields]) => {
    const name = `inference.${short}`;
    const byName = new Map(fields.map((f) => [f.name, f]));
    const byJsonName = new Map(fields.map((f) => [camel(f.name), f]));
    return [name, { name, fields, byName, byJsonName }];
  }),
);

/**
 * Other names accepted for a field, mapped to the canonical one. Upstream renamed
 * `ModelEnsembling.max_inflight_requests` (#2) to `max_inflight_responses` in newer protos; both
 * spellings are the same field, so configs written for either Triton version parse.
 */
export const FIELD_ALIASES: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  ['inference.ModelEnsembling', new Map([['max_inflight_responses', 'max_inflight_requests']])],
]);

/**
 * The one deliberate departure from model_config.proto: `dynamic_batching` may sit beside
 * `ensemble_scheduling` (Tritium batches a whole ensemble pipeline, DESIGN §3), although both are
 * members of the `scheduling_choice` oneof. Every other oneof pair stays exclusive.
 */
export function oneofConflictAllowed(messageName: string, a: string, b: string): boolean {
  if (messageName !== 'inference.ModelConfig') return false;
  const pair = new Set([a, b]);
  return pair.has('dynamic_batching') && pair.has('ensemble_scheduling');
}

export const MODEL_CONFIG = 'inference.ModelConfig';

export function messageDescriptor(name: string): MessageDescriptor {
  const d = MESSAGES.get(name);
  if (!d) throw new Error(`schema: unknown message ${name}`);
  return d;
}

export function enumDescriptor(name: string): EnumDescriptor {
  const d = ENUMS.get(name);
  if (!d) throw new Error(`schema: unknown enum ${name}`);
  return d;
}

/** True for fields that proto3 gives explicit presence (singular messages and oneof members). */
export function hasPresence(field: FieldDescriptor): boolean {
  return field.label === 'singular' && (field.value.kind === 'message' || field.oneof !== undefined);
}

export function is64Bit(scalar: ScalarType): boolean {
  return scalar === 'int64' || scalar === 'uint64';
}

/** proto3 default of one value of `value` (messages have none: they are absent). */
export function defaultValue(value: ValueType): unknown {
  if (value.kind === 'enum') return enumDescriptor(value.enumName).values[0];
  if (value.kind === 'message') return undefined;
  switch (value.scalar) {
    case 'string':
      return '';
    case 'bool':
      return false;
    default:
      return 0;
  }
}

type DefaultPlan = ReadonlyArray<readonly [name: string, kind: 'list' | 'map' | 'value', value: unknown]>;
const defaultPlans = new WeakMap<MessageDescriptor, DefaultPlan>();

function defaultPlan(desc: MessageDescriptor): DefaultPlan {
  let plan = defaultPlans.get(desc);
  if (!plan) {
    plan = desc.fields
      .filter((f) => f.label !== 'singular' || !hasPresence(f))
      .map((f) => [f.name, f.label === 'repeated' ? 'list' : f.label === 'map' ? 'map' : 'value', defaultValue(f.value)] as const);
    defaultPlans.set(desc, plan);
  }
  return plan;
}

/** Sets every non-presence field of a message that does not have it yet to its proto3 default. */
export function fillDefaults(desc: MessageDescriptor, target: Record<string, unknown>): void {
  for (const [name, kind, value] of defaultPlan(desc)) {
    if (target[name] !== undefined) continue;
    target[name] = kind === 'list' ? [] : kind === 'map' ? {} : value;
  }
}

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The candidate nearest to `name` (case-insensitive), if close enough to be a plausible typo. */
export function nearestName(candidates: Iterable<string>, name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  const limit = Math.max(2, Math.floor(name.length / 3));
  return bestDistance <= limit ? best : undefined;
}

/** The known field name nearest to `name`, if it is close enough to be a plausible typo. */
export function nearestFieldName(desc: MessageDescriptor, name: string): string | undefined {
  return nearestName(
    desc.fields.map((f) => f.name),
    name,
  );
}
