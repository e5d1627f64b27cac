/**
 * Turns a ModelConfig into the plain options the batcher runs on (the one place config field
 * names are read for scheduling), and what else a batcher is given (BatcherDeps).
 */
import { InferError } from '../errors.ts';
import { toNumber, type ModelConfig, type ModelQueuePolicy } from '../config/model-config.ts';
import type { InferRequest } from '../types.ts';
import { batchSizeOf } from '../tensor/batch.ts';
import { paddingSpecFromConfig, unpaddingSpecFromConfig } from '../tensor/pad.ts';
import { modelTokenBudget, tokenInputOf, type TokenBudget } from './token-budget.ts';
import type { ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import type { BatchHold } from './batch-hold.ts';
import type { Clock } from './scheduler.ts';
import type { StatsRecorder } from './stats-recorder.ts';

export interface QueuePolicy {
  readonly timeoutAction: 'REJECT' | 'DELAY';
  /** 0 = no timeout. */
  readonly defaultTimeoutUs: number;
  readonly allowTimeoutOverride: boolean;
  /** 0 = unbounded. */
  readonly maxQueueSize: number;
}

export interface BatcherOptions {
  readonly modelName: string;
  readonly version: number;
  /** False: every execution carries exactly one request (direct scheduling, or max_batch_size 0). */
  readonly batching: boolean;
  readonly maxBatchSize: number;
  /** Ascending; defaults to [max_batch_size]. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
  /**
   * `tritium.batching: adaptive` (beyond Triton): wait out `maxQueueDelayUs` only while requests are
   * observed to arrive during waits (see adaptive-delay.ts). False: Triton's fixed delay.
   */
  readonly adaptive: boolean;
  /** Number of queue levels (1 when priority_levels is 0). */
  readonly levelCount: number;
  /** Level index (0-based) of requests with priority 0 or out of range. */
  readonly defaultLevel: number;
  /** The queue policy of a level index: its `priority_queue_policy`, else `default_queue_policy`. */
  policyOf(level: number): QueuePolicy;
  /** Paddable inputs → encoded pad element (`tritium.pad.<INPUT>` parameters). */
  readonly padding: ReadonlyMap<string, Uint8Array>;
  /** Outputs trimmed back per request after padding (`tritium.unpad.<OUTPUT>` = input name). */
  readonly unpadding: ReadonlyMap<string, string>;
  /** Length-aware batching of a model (`tritium.batch_tokens`): each batch is its head's length group. */
  readonly tokens: TokenBudget | undefined;
  /** The input whose dim 1 is a request's length in tokens (token statistics), if one is padded. */
  readonly tokenInput: string | undefined;
  /** Batch size of a request (throws INVALID_ARG). */
  batchSize(request: InferRequest): number;
  /** Requests co-batch only when their keys are equal (equal-shape + optional-presence rules). */
  shapeKey(request: InferRequest): string;
}

/** Where a request waits: its priority level, that level's policy, and its own queue timeout (µs, 0: none). */
export interface QueuePlacement {
  readonly level: number;
  readonly policy: QueuePolicy;
  readonly timeoutUs: number;
}

/** Triton's PolicyQueue::Enqueue: the level of the request's priority, and a timeout that only ever lowers a non-zero default. */
export function queuePlacement(options: BatcherOptions, request: InferRequest): QueuePlacement {
  const p = request.priority ?? 0;
  const level = p >= 1 && p <= options.levelCount && options.levelCount > 1 ? p - 1 : options.defaultLevel;
  const policy = options.policyOf(level);
  let timeoutUs = policy.defaultTimeoutUs;
  const override = request.timeoutUs ?? 0;
  if (policy.allowTimeoutOverride && override > 0 && override < timeoutUs) timeoutUs = override;
  return { level, policy, timeoutUs };
}

/** What a dynamic batcher runs with besides its options. */
export interface BatcherDeps {
  readonly instances: readonly ModelInstance[];
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
  readonly log?: Logger;
  /** Decoupled model: executions go through `executeDecoupled`. */
  readonly decoupled?: boolean;
  /**
   * Report COMPUTE_* activities to the traces of the requests an execution carried (default true).
   * False for a pipeline ensemble's batcher: its "execution" is the steps, which trace themselves.
   */
  readonly traceCompute?: boolean;
  /**
   * Holds a batch that is ready but below the smallest preferred size (a pipeline ensemble whose
   * last step is busy, see ensemble/runtime/pipeline-hold.ts): how long it may wait for more requests.
   */
  readonly hold?: BatchHold;
}

const NO_POLICY: QueuePolicy = { timeoutAction: 'REJECT', defaultTimeoutUs: 0, allowTimeoutOverride: false, maxQueueSize: 0 };

function policyOf(p: ModelQueuePolicy | undefined): QueuePolicy {
  if (!p) return NO_POLICY;
  return {
    timeoutAction: p.timeout_action === 'DELAY' ? 'DELAY' : 'REJECT',
    defaultTimeoutUs: toNumber(p.default_timeout_microseconds ?? 0),
    allowTimeoutOverride: !!p.allow_timeout_override,
    maxQueueSize: p.max_queue_size ?? 0,
  };
}

/**
 * Builds a shape-key function: inputs with a -1 dim (not ragged, not paddable) must match exactly,
 * paddable inputs must match in rank, and the set of present inputs must match when the model
 * has optional inputs. Returns '' for every request when nothing can differ.
 */
export function shapeKeyFor(config: Pick<ModelConfig, 'input' | 'max_batch_size'>, padding: ReadonlyMap<string, Uint8Array>): (r: InferRequest) => string {
  const batching = config.max_batch_size > 0;
  const strict = new Set<string>();
  const rankOnly = new Set<string>();
  for (const input of config.input) {
    const variable = input.dims.some((d) => d < 0) || input.is_shape_tensor;
    if (padding.has(input.name)) rankOnly.add(input.name);
    else if (variable && !input.allow_ragged_batch) strict.add(input.name);
  }
  const hasOptional = config.input.some((i) => i.optional);
  if (strict.size === 0 && rankOnly.size === 0 && !hasOptional) return () => '';
  return (r) => {
    let key = '';
    for (const t of r.inputs) {
      if (strict.has(t.name)) key += `${t.name}:${(batching ? t.shape.slice(1) : t.shape).join('x')};`;
      else if (rankOnly.has(t.name)) key += `${t.name}:r${t.shape.length};`;
      else if (hasOptional) key += `${t.name};`;
    }
    return key;
  };
}

/** The config parameter choosing the batching policy, and its values. */
export const BATCHING_PARAMETER = 'tritium.batching';
const BATCHING_VALUES = ['fixed', 'adaptive'] as const;

/** `tritium.batching` of `config`: 'fixed' (Triton's, the default) or 'adaptive'; anything else is refused naming it. */
export function batchingPolicyOf(config: Pick<ModelConfig, 'name' | 'parameters'>): 'fixed' | 'adaptive' {
  const value = config.parameters?.[BATCHING_PARAMETER]?.string_value;
  if (value === undefined || value === '') return 'fixed';
  if (!(BATCHING_VALUES as readonly string[]).includes(value)) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${BATCHING_PARAMETER}' must be one of ${BATCHING_VALUES.join(', ')}, got '${value}'`,
    );
  }
  return value as 'fixed' | 'adaptive';
}

/** Options for `config`; `dynamic` false gives direct scheduling (one request per execution). */
export function batcherOptionsFromConfig(config: ModelConfig, version: number, dynamic = !!config.dynamic_batching): BatcherOptions {
  const db = dynamic ? config.dynamic_batching : undefined;
  const maxBatchSize = config.max_batch_size;
  const levels = db ? toNumber(db.priority_levels ?? 0) : 0;
  const levelCount = Math.max(1, levels);
  const defaultLevel = levels > 0 ? Math.min(levels, Math.max(1, toNumber(db?.default_priority_level ?? 0) || 1)) - 1 : 0;
  // One entry per level that has its own policy; every other level (up to 2^64-1 of them, as
  // Triton allows) shares the default, so nothing here grows with priority_levels.
  const defaultPolicy = policyOf(db?.default_queue_policy);
  const specificPolicies = new Map<number, QueuePolicy>();
  if (levels > 0) {
    for (const [key, policy] of Object.entries(db?.priority_queue_policy ?? {})) specificPolicies.set(Number(key) - 1, policyOf(policy));
  }
  const preferred = [...(db?.preferred_batch_size ?? [])].filter((n) => n > 0).sort((a, b) => a - b);
  if (preferred.length === 0 && maxBatchSize > 0) preferred.push(maxBatchSize);
  for (const p of preferred) {
    if (p > maxBatchSize) throw new InferError('INVALID_ARG', `dynamic batching preferred size must be <= max batch size for ${config.name}`);
  }
  const padding = db && maxBatchSize > 0 ? paddingSpecFromConfig(config) : new Map<string, Uint8Array>();
  const unpadding = padding.size > 0 ? unpaddingSpecFromConfig(config) : new Map<string, string>();
  // An ensemble's budget is its pipeline's (ensemble/runtime/length-batching.ts), not its batcher's.
  const ensemble = config.platform === 'ensemble' || !!config.ensemble_scheduling;
  const tokens = ensemble ? undefined : modelTokenBudget(config, padding, !!db && maxBatchSize > 0);
  return {
    modelName: config.name,
    version,
    batching: !!db && maxBatchSize > 0,
    maxBatchSize,
    preferredBatchSizes: preferred,
    maxQueueDelayUs: db ? toNumber(db.max_queue_delay_microseconds ?? 0) : 0,
    preserveOrdering: !!db?.preserve_ordering,
    adaptive: !!db && batchingPolicyOf(config) === 'adaptive',
    levelCount,
    defaultLevel,
    policyOf: (level) => specificPolicies.get(level) ?? defaultPolicy,
    padding,
    unpadding,
    tokens,
    tokenInput: ensemble ? undefined : tokenInputOf(config, padding, tokens),
    batchSize: (r) => batchSizeOf(r, config),
    shapeKey: shapeKeyFor(config, padding),
  };
}
