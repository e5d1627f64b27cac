/**
 * Pipeline batching (Tritium's second ensemble mode; Triton rejects such configs): an ensemble
 * config carrying `dynamic_batching` gets its own dynamic batcher over ensemble requests. Each
 * batch is concatenated along dim 0 into ONE request that flows through every step as a unit
 * (via the server's `infer`, so steps' own batchers may still merge pipeline batches), then the
 * final outputs are split back per request by rows.
 *
 * A batch that fails as a whole is retried by the batcher's bisection (poison isolation, see
 * DynamicBatcher): halves run one after the other until each failure is pinned on the requests
 * that fail alone; a step's own batcher isolates what it merged the same way.
 *
 * Requests merge only when their parameters, priority and timeout agree (merge-key.ts), so the
 * merged request carries each one's own.
 *
 * Concurrency: `parameters { key: "tritium.pipeline.concurrency" value: { string_value: "N" } }`
 * pipeline batches run at once (default 2).
 */
import { InferError } from '../../errors.ts';
import type { ExecuteResult, ModelInstance } from '../../backend/spi.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import type { CallFrame, InferRequest } from '../../types.ts';
import { concatInputs, rowsOf, splitOutputs } from '../../tensor/batch.ts';
import { batcherOptionsFromConfig } from '../../scheduler/batcher-options.ts';
import { DynamicBatcher } from '../../scheduler/dynamic-batcher.ts';
import type { Scheduler } from '../../scheduler/scheduler.ts';
import { runEnsemble, type EnsembleContext } from './ensemble-run.ts';
import { ensembleContext, type EnsembleDeps } from './ensemble-scheduler.ts';
import { requestSemanticsKey } from './merge-key.ts';

export const PIPELINE_CONCURRENCY_PARAMETER = 'tritium.pipeline.concurrency';

/**
 * Runs a batch of ensemble requests as ONE pipeline request and splits the final outputs back per
 * request. A failing step fails the whole batch (the returned promise rejects): the ensemble's
 * batcher then bisects it like any failing batch (see DynamicBatcher), so only poisoned requests
 * fail, each with its own error.
 */
export async function runPipelineBatch(
  ctx: EnsembleContext,
  batch: readonly InferRequest[],
  signal: AbortSignal,
  callers?: readonly CallFrame[],
): Promise<ExecuteResult[]> {
  const first = batch[0]!;
  // The pipeline slot this batch holds, and whoever waits on its requests, go with every step (BLS cycles).
  const held = callers ? { callers } : {};
  if (batch.length === 1) {
    return [await runEnsemble(ctx, { ...first, signal, preformed: true, ...held })];
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
    // Equal across the batch (merge-key.ts): every request's own parameters, priority and timeout.
    ...(first.parameters ? { parameters: first.parameters } : {}),
    ...(first.priority !== undefined ? { priority: first.priority } : {}),
    ...(first.timeoutUs !== undefined ? { timeoutUs: first.timeoutUs } : {}),
    ...(first.sequence ? { sequence: first.sequence } : {}),
    ...held,
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
    execute: async (batch, signal, context) => ({ results: await runPipelineBatch(ctx, batch, signal, context?.callers) }),
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
  const options = batcherOptionsFromConfig(config, deps.version);
  const shapeKey = options.shapeKey;
  // Only requests whose parameters, priority and timeout agree share a pipeline batch.
  const pipelineOptions = { ...options, shapeKey: (r: InferRequest) => shapeKey(r) + requestSemanticsKey(r) };
  return new DynamicBatcher(pipelineOptions, { instances, clock: deps.clock, stats: deps.stats, log: deps.log });
}
