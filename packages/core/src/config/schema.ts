/**
 * The schema of `inference.ModelConfig` as data: every message, field name, field number, type,
 * label (singular / repeated / map) and oneof, plus every enum. The text parser, the JSON
 * printer/reader and the text printer are all driven by this one table.
 *
 * The table itself is generated from `packages/client/proto/model_config.proto` (Tritium's copy of
 * Triton's common:protobuf/model_config.proto) into `generated/model-config-schema.ts`, together with
 * the TypeScript types (`generated/model-config-types.ts`): adding a field means adding it to the
 * proto and running `npm run generate` (tools/codegen). What the proto does not say is written here:
 * the fields Triton prints as JSON numbers, one field alias, and the one oneof Tritium relaxes.
 *
 * Fields are listed in the proto's *declaration* order: that is the order protobuf's JSON printer
 * (and Triton's `GET /v2/models/<m>/config`) writes them in.
 */
import { ENUM_ROWS, MESSAGE_ROWS } from './generated/model-config-schema.ts';

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

/** One enum as the generated table holds it: full name, then value names and numbers. */
export type SchemaEnumRow = readonly [name: string, values: readonly (readonly [string, number])[]];
/** One message as the generated table holds it: full name, then its fields as the proto declares them. */
export type SchemaMessageRow = readonly [name: string, fields: readonly Omit<FieldDescriptor, 'jsonNumber'>[]];

/**
 * The 64-bit fields Triton's ModelConfigToJson rewrites from strings to numbers (its FixInt and
 * FixIntArray calls, triton-inference-server/core src/model_config_utils.cc). It misses
 * `ModelSequenceBatching.InitialState.dims` (it looks for `initial_state` in the wrong object), so
 * those dims stay strings, as every other 64-bit field does.
 */
const JSON_NUMBER_FIELDS: readonly string[] = [
  'inference.ModelTensorReshape.shape',
  'inference.ModelInput.dims',
  'inference.ModelOutput.dims',
  'inference.ModelVersionPolicy.Specific.versions',
  'inference.ModelQueuePolicy.default_timeout_microseconds',
  'inference.ModelDynamicBatching.max_queue_delay_microseconds',
  'inference.ModelDynamicBatching.priority_levels',
  'inference.ModelDynamicBatching.default_priority_level',
  'inference.ModelSequenceBatching.State.dims',
  'inference.ModelSequenceBatching.StrategyDirect.max_queue_delay_microseconds',
  'inference.ModelSequenceBatching.StrategyOldest.max_queue_delay_microseconds',
  'inference.ModelSequenceBatching.max_sequence_idle_microseconds',
  'inference.ModelEnsembling.Step.model_version',
  'inference.ModelWarmup.Input.dims',
];

// ---- enums -------------------------------------------------------------------------------------

export const ENUMS: ReadonlyMap<string, EnumDescriptor> = new Map(
  ENUM_ROWS.map(([name, values]) => [
    name,
    { name, values: values.map(([n]) => n), byName: new Map(values), byNumber: new Map(values.map(([n, v]) => [v, n])) },
  ]),
);

// ---- messages ----------------------------------------------------------------------------------

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

const jsonNumbers = new Set(JSON_NUMBER_FIELDS);

export const MESSAGES: ReadonlyMap<string, MessageDescriptor> = new Map(
  MESSAGE_ROWS.map(([name, rows]) => {
    const fields: FieldDescriptor[] = rows.map((f) => (jsonNumbers.delete(`${name}.${f.name}`) ? { ...f, jsonNumber: true } : f));
    const byName = new Map(fields.map((f) => [f.name, f]));
    const byJsonName = new Map(fields.map((f) => [camel(f.name), f]));
    return [name, { name, fields, byName, byJsonName }];
  }),
);
if (jsonNumbers.size > 0) throw new Error(`schema: JSON_NUMBER_FIELDS names ${[...jsonNumbers].join(', ')}, not in model_config.proto`);

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
 * `ensemble_scheduling` (pipeline batching, docs/architecture.md), although both are
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
