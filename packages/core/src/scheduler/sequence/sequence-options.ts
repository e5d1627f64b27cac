import { InferError } from '../../errors.ts';
import { toNumber, type ModelConfig } from '../../config/model-config.ts';
import type { ModelInstance } from '../../backend/spi.ts';
import type { Logger } from '../../logger.ts';
import type { FormationRules } from '../batch-formation.ts';
import type { Clock } from '../scheduler.ts';
import type { StatsRecorder } from '../stats-recorder.ts';
import type { InitialStateData } from './implicit-state.ts';

/** What a sequence batcher runs with besides its model's config. */
export interface SequenceBatcherDeps {
  readonly instances: readonly ModelInstance[];
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
  readonly log?: Logger;
  /** Decoupled model: executions go through `executeDecoupled`. */
  readonly decoupled?: boolean;
  /** Loaded `initial_state` data by state input name (see loadInitialStates). */
  readonly initialStates?: ReadonlyMap<string, InitialStateData>;
}


/** The sequence batcher's settings, read from `sequence_batching` (the one place its fields are read). */
export interface SequenceOptions {
  readonly strategy: 'direct' | 'oldest';
  /** `max_sequence_idle_microseconds` (Triton's default 1 s). */
  readonly idleUs: number;
  /** Direct: batch delay and the share of slots that must be ready to send before it. */
  readonly directDelayUs: number;
  readonly minUtilization: number;
  /** max(1, max_batch_size), or `oldest.max_candidate_sequences`. */
  readonly slotsPerInstance: number;
  /** Oldest: how an instance batches its slots' offered requests (the dynamic batcher's rules). */
  readonly formation: FormationRules;
}

/** Reads `config.sequence_batching`; throws UNSUPPORTED for what Tritium does not run. */
export function sequenceOptions(config: ModelConfig): SequenceOptions {
  const sb = config.sequence_batching!;
  if (sb.iterative_sequence) {
    throw new InferError('UNSUPPORTED', `model '${config.name}': sequence_batching.iterative_sequence (request rescheduling) is not supported by Tritium`);
  }
  const maxBatch = Math.max(1, config.max_batch_size);
  const preferred = [...(sb.oldest?.preferred_batch_size ?? [])].filter((n) => n > 0).sort((a, b) => a - b);
  return {
    strategy: sb.oldest ? 'oldest' : 'direct',
    idleUs: Math.max(1, toNumber(sb.max_sequence_idle_microseconds ?? 1_000_000)),
    directDelayUs: toNumber(sb.direct?.max_queue_delay_microseconds ?? 0),
    minUtilization: sb.direct?.minimum_slot_utilization ?? 0,
    slotsPerInstance: sb.oldest && sb.oldest.max_candidate_sequences > 0 ? sb.oldest.max_candidate_sequences : maxBatch,
    formation: {
      batching: config.max_batch_size > 0,
      maxBatchSize: config.max_batch_size,
      maxPreferred: preferred.length > 0 ? Math.max(...preferred) : maxBatch,
      preferred: new Set(preferred),
      maxQueueDelayUs: toNumber(sb.oldest?.max_queue_delay_microseconds ?? 0),
      preserveOrdering: !!sb.oldest?.preserve_ordering,
    },
  };
}
