/**
 * Picks the scheduler a model version runs under: ensemble (per-step, or pipeline batching when
 * the ensemble config carries `dynamic_batching`), sequence batcher, dynamic batcher, or direct.
 */
import type { ModelConfig } from '../config/model-config.ts';
import type { ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import { EnsembleScheduler } from '../ensemble/runtime/ensemble-scheduler.ts';
import { createPipelineEnsemble } from '../ensemble/runtime/pipeline-ensemble.ts';
import { batcherOptionsFromConfig, type BatcherOptions } from './batcher-options.ts';
import { createDirectScheduler } from './direct-scheduler.ts';
import { DynamicBatcher } from './dynamic-batcher.ts';
import { SequenceBatcher } from './sequence/sequence-batcher.ts';
import type { InitialStateData } from './sequence/implicit-state.ts';
import type { Clock, Scheduler } from './scheduler.ts';
import type { StatsRecorder } from './stats-recorder.ts';
import { splitRowsOf, splittingScheduler } from './split-oversized.ts';

export interface SchedulerDeps {
  readonly modelName: string;
  readonly version: number;
  /** The version's instances (empty for ensembles). */
  readonly instances: readonly ModelInstance[];
  /** Server entry point; ensemble steps re-enter it so composing models' schedulers apply. */
  readonly infer: (request: InferRequest) => Promise<InferResponse>;
  /** Streaming entry point (decoupled composing models); optional. */
  readonly inferStream?: (request: InferRequest, sink: ResponseSink) => void;
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
  readonly log?: Logger;
  /** `sequence_batching.state` initial values read at load (loadInitialStates), by state input name. */
  readonly initialStates?: ReadonlyMap<string, InitialStateData>;
  /** Config of another loaded model (ensembles use it for batch/non-batch adaptation). */
  readonly getModelConfig?: (name: string, version?: number) => ModelConfig | undefined;
}

export function isEnsembleConfig(config: ModelConfig): boolean {
  return config.platform === 'ensemble' || !!config.ensemble_scheduling;
}

/**
 * Creates the scheduler for one loaded model version. Throws INVALID_ARG when the scheduling
 * options are inconsistent (e.g. a preferred batch size above max_batch_size).
 */
export function createScheduler(config: ModelConfig, deps: SchedulerDeps): Scheduler {
  const options = !isEnsembleConfig(config) && !config.sequence_batching && config.dynamic_batching ? batcherOptionsFromConfig(config, deps.version) : undefined;
  const scheduler = schedulerFor(config, deps, options);
  // Requests past max_batch_size, or past a model's token budget, split into parts (tritium.split_rows,
  // opt-in; refused where it cannot apply); without it a request past the token budget is refused.
  const split = splitRowsOf(config) !== undefined;
  const tokens = options?.tokens;
  if (!split && !tokens) return scheduler;
  return splittingScheduler(scheduler, config, {
    maxBatchSize: config.max_batch_size,
    ...(tokens ? { tokens } : {}),
    split,
    preserveOrdering: !!config.dynamic_batching?.preserve_ordering,
  });
}

function schedulerFor(config: ModelConfig, deps: SchedulerDeps, options: BatcherOptions | undefined): Scheduler {
  if (isEnsembleConfig(config)) {
    return config.dynamic_batching ? createPipelineEnsemble(config, deps) : new EnsembleScheduler(config, deps);
  }
  if (config.sequence_batching) {
    return new SequenceBatcher(config, deps.version, {
      instances: deps.instances,
      clock: deps.clock,
      stats: deps.stats,
      log: deps.log,
      decoupled: !!config.model_transaction_policy?.decoupled,
      ...(deps.initialStates ? { initialStates: deps.initialStates } : {}),
    });
  }
  const batcherDeps = {
    instances: deps.instances,
    clock: deps.clock,
    stats: deps.stats,
    log: deps.log,
    decoupled: !!config.model_transaction_policy?.decoupled,
  };
  if (options) return new DynamicBatcher(options, batcherDeps);
  return createDirectScheduler(config, deps.version, batcherDeps);
}
