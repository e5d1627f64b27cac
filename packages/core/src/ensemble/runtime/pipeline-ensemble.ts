/**
 * Pipeline batching (Tritium's second ensemble mode; Triton rejects such configs): an ensemble
 * config carrying `dynamic_batching` gets its own dynamic batcher over ensemble requests. Each
 * batch is concatenated along dim 0 into ONE request that flows through every step as a unit
 * (via the server's `infer`, so steps' own batchers may still merge pipeline batches), then the
 * final outputs are split back per request by rows.
 *
 * When a whole batch fails (INTERNAL, INVALID_ARG or UNKNOWN), it is retried by bisection: halves
 * run separately until the failing request is alone, so only the poisoned request fails and its
 * neighbours succeed. A batch of n requests with one poisoned costs at most 2·log2(n)+1 runs.
 *
 * Concurrency: `parameters { key: "tritium.pipeline.concurrency" value: { string_value: "N" } }`
 * pipeline batches run at once (default 2).
 */
import { InferError } from '../../errors.ts';
import type { ExecuteResult, ModelInstance } from '../../backend/spi.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import type { InferRequest } from '../../types.ts';
import { concatInputs, rowsOf, splitOutputs } from '../../tensor/batch.ts';
import { batcherOptionsFromConfig } from '../../scheduler/batcher-options.ts';
import { DynamicBatcher } from '../../scheduler/dynamic-batcher.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import { runEnsemble, type EnsembleContext } from './ensemble-run.ts';
import { ensembleContext, type EnsembleDeps } from './ensemble-scheduler.ts';

export const PIPELINE_CONCURRENCY_PARAMETER = 'tritium.pipeline.concurrency';

/**
 * Errors that may come from one bad request and are worth bisecting. UNAVAILABLE, NOT_FOUND,
 * UNSUPPORTED and CANCELLED say nothing about the data, so the whole batch fails with them.
 */
const BISECTABLE: ReadonlySet<string> = new Set(['INTERNAL', 'INVALID_ARG', 'UNKNOWN']);

/** Runs a batch of ensemble requests as one pipeline request; bisects on failure. */
export async function runPipelineBatch(ctx: EnsembleContext, batch: readonly InferRequest[], signal: AbortSignal): Promise<ExecuteResult[]> {
  try {
    return await runMerged(ctx, batch, signal);
  } catch (err) {
    const error = InferError.from(err);
    if (batch.length === 1 || !BISECTABLE.has(error.code) || signal.aborted) return batch.map(() => error);
    const mid = Math.ceil(batch.length / 2);
    const [a, b] = await Promise.all([runPipelineBatch(ctx, batch.slice(0, mid), signal), runPipelineBatch(ctx, batch.slice(mid), signal)]);
    return [...a, ...b];
  }
}

async function runMerged(ctx: EnsembleContext, batch: readonly InferRequest[], signal: AbortSignal): Promise<ExecuteResult[]> {
  const first = batch[0]!;
  if (batch.length === 1) {
    return [await runEnsemble(ctx, { ...first, signal, preformed: true })];
  }
  const inputs = first.inputs.map((t) => concatInputs(batch, t.name));
  const wantsAll = batch.some((r) => !r.outputs || r.outputs.length === 0);
  const outputNames = wantsAll ? [] : [...new Set(batch.flatMap((r) => r.outputs!.map((o) => o.name)))];
  const merged: InferRequest = {
    id: `${first.id}+${batch.length - 1}`,
    model: first.model,
    ...(first.version !== undefined ? { version: first.version } : {}),
    inputs,
    ...(outputNames.length > 0 ? { outputs: outputNames.map((name) => ({ name })) } : {}),
    ...(first.parameters ? { parameters: first.parameters } : {}),
    ...(first.priority !== undefined ? { priority: first.priority } : {}),
    signal,
    // The ensemble's batcher already waited for this batch: steps' batchers must not wait again.
    preformed: true,
  };
  const response = await runEnsemble(ctx, merged);
  return splitOutputs(batch, response.outputs, { model: ctx.config.name, version: ctx.version, rows: batch.map(rowsOf) });
}

/** A virtual instance: one pipeline batch in flight at a time. */
function pipelineInstance(ctx: EnsembleContext): ModelInstance {
  return {
    execute: async (batch, signal) => ({ results: await runPipelineBatch(ctx, batch, signal) }),
    dispose: () => Promise.resolve(),
  };
}

/** Creates the pipeline-batching scheduler for an ensemble config with `dynamic_batching`. */
export function createPipelineEnsemble(config: ModelConfig, deps: EnsembleDeps): Scheduler {
  const ctx = ensembleContext(config, deps);
  const raw = config.parameters?.[PIPELINE_CONCURRENCY_PARAMETER]?.string_value;
  const concurrency = raw === undefined ? 2 : Number(raw);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InferError('INVALID_ARG', `parameter '${PIPELINE_CONCURRENCY_PARAMETER}' must be a positive integer for '${config.name}', got '${raw}'`);
  }
  const instances = Array.from({ length: concurrency }, () => pipelineInstance(ctx));
  return new DynamicBatcher(batcherOptionsFromConfig(config, deps.version), { instances, clock: deps.clock, stats: deps.stats, log: deps.log });
}
