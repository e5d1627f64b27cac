/**
 * Pipeline batching (Tritium's second ensemble mode; Triton rejects such configs): an ensemble
 * config carrying `dynamic_batching` gets its own dynamic batcher over ensemble requests. Each
 * batch is concatenated along dim 0 into ONE request that flows through every step as a unit
 * (via the server's `infer`, so steps' own batchers may still merge pipeline batches), then the
 * final outputs are split back per request by rows.
 *
 * A batch that fails as a whole is retried by the batcher's bisection (poison isolation, see
 * DynamicBatcher): halves run one after the other until each failure is pinned on the requests
 * that fail alone; a step's own batcher isolates what it merged the same way. A batch whose step
 * crashed its instance has its requests re-run alone through the pipeline, once (crash-retry.ts).
 *
 * Requests merge only when their parameters, priority and timeout agree (merge-key.ts), so the
 * merged request carries each one's own.
 *
 * Concurrency: `parameters { key: "tritium.pipeline.concurrency" value: { string_value: "N" } }`
 * pipeline batches run at once (default 2).
 *
 * A batch below the smallest preferred size is held while the last step is busy, until it would
 * reach that step as it frees, at most the max queue delay (pipeline-hold.ts): waves of a closed
 * loop merge into full batches instead of settling in more, smaller ones.
 */
import { InferError } from '../../errors.ts';
import type { ExecuteOutput, ModelInstance } from '../../backend/spi.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import type { CallFrame, InferRequest, TokenCount } from '../../types.ts';
import { concatInputs, rowsOf, splitOutputs } from '../../tensor/batch.ts';
import { batcherOptionsFromConfig } from '../../scheduler/batcher-options.ts';
import { DynamicBatcher } from '../../scheduler/dynamic-batcher.ts';
import { systemClock, type Clock, type Scheduler } from '../../scheduler/scheduler.ts';
import type { StatsRecorder } from '../../scheduler/stats-recorder.ts';
import { guardedStats } from '../../scheduler/guarded-stats.ts';
import { silentLogger } from '../../logger.ts';
import { compositeTrace } from '../../trace/request-trace.ts';
import { ComputeTotal } from './compute-total.ts';
import { runEnsemble, stepVersion, type EnsembleContext, type EnsembleObservation } from './ensemble-run.ts';
import { ensembleContext, type EnsembleDeps } from './ensemble-scheduler.ts';
import { requestSemanticsKey } from './merge-key.ts';
import { PipelineHold } from './pipeline-hold.ts';
import { instancesPerVersion } from '../../config/validate-instances.ts';

export const PIPELINE_CONCURRENCY_PARAMETER = 'tritium.pipeline.concurrency';

/**
 * When a request entered the pipeline's batcher (µs, the batcher's clock): noted by the scheduler
 * below. Beside the request rather than on a copy of it: copying a request with a spread cost
 * ~0.9 us of main-thread CPU per inference.
 */
const arrivals = new WeakMap<InferRequest, number>();

/**
 * Runs a batch of ensemble requests as ONE pipeline request and splits the final outputs back per
 * request. A failing step fails the whole batch (the returned promise rejects): the ensemble's
 * batcher then bisects it like any failing batch (see DynamicBatcher), so only poisoned requests
 * fail, each with its own error.
 *
 * Statistics and traces follow Triton's per-step ensemble for the same requests: each step counts
 * every ensemble request the batch carries; the first step's queue includes each one's wait in the
 * ensemble's batcher; the returned timings are the sum of the steps' compute (the ensemble's
 * compute); each traced request gets every step as a child of its own trace, linked to the others
 * of its batch.
 */
export async function runPipelineBatch(
  ctx: EnsembleContext,
  batch: readonly InferRequest[],
  signal: AbortSignal,
  callers?: readonly CallFrame[],
  nowUs: () => number = () => Math.round(performance.now() * 1000),
  stats?: Pick<StatsRecorder, 'tokens'>,
): Promise<ExecuteOutput> {
  const first = batch[0]!;
  // The pipeline slot this batch holds, and whoever waits on its requests, go with every step (BLS cycles).
  const held = callers ? { callers } : {};
  const now = nowUs();
  const waits = batch.map((r) => {
    const arrival = arrivals.get(r);
    return { priorQueueNs: arrival === undefined ? 0 : Math.max(0, now - arrival) * 1000 };
  });
  const total = new ComputeTotal();
  const traces = batch.flatMap((r) => (r.trace ? [r.trace] : []));
  if (traces.length > 1) for (const t of traces) t.linkBatch(traces);
  const trace = compositeTrace(traces);
  const observe: EnsembleObservation = {
    computeSink: total,
    carried: batch.map(() => ({ priorQueueNs: 0 })),
    firstCarried: waits,
    carriedRows: batch.map(rowsOf),
    ...(stats?.tokens ? { groupTokens: (t: TokenCount) => stats.tokens!(t) } : {}),
  };
  if (batch.length === 1) {
    const { trace: _own, ...single } = first;
    const response = await runEnsemble(ctx, { ...single, ...(trace ? { trace } : {}), signal, preformed: true, ...held }, observe);
    return { results: [response], timings: total.durations() };
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
    ...(trace ? { trace } : {}),
  };
  const response = await runEnsemble(ctx, merged, observe);
  const results = splitOutputs(batch, response.outputs, { model: ctx.config.name, version: ctx.version, rows: batch.map(rowsOf) });
  return { results, timings: total.durations() };
}

/** A virtual instance: one pipeline batch in flight at a time. */
function pipelineInstance(ctx: EnsembleContext, clock: Clock, stats: StatsRecorder | undefined): ModelInstance {
  return {
    execute: (batch, signal, context) => runPipelineBatch(ctx, batch, signal, context?.callers, () => clock.nowUs(), stats),
    dispose: () => Promise.resolve(),
  };
}

/** The hold for a pipeline of two or more steps with a queue delay (none otherwise). */
function pipelineHold(config: ModelConfig, deps: EnsembleDeps, clock: Clock, maxHoldUs: number): PipelineHold | undefined {
  const steps = config.ensemble_scheduling?.step ?? [];
  const last = steps[steps.length - 1];
  if (steps.length < 2 || !last || maxHoldUs <= 0) return undefined;
  const lastInstances = (): number => {
    const lastConfig = deps.getModelConfig?.(last.model_name, stepVersion(last));
    return Math.max(1, lastConfig ? instancesPerVersion(lastConfig) : 1);
  };
  return new PipelineHold({
    lastModel: last.model_name,
    lastInstances,
    maxHoldUs,
    nowUs: () => clock.nowUs(),
  });
}

/** Creates the pipeline-batching scheduler for an ensemble config with `dynamic_batching`. */
export function createPipelineEnsemble(config: ModelConfig, deps: EnsembleDeps): Scheduler {
  const clock = deps.clock ?? systemClock;
  const options = batcherOptionsFromConfig(config, deps.version);
  const hold = pipelineHold(config, deps, clock, options.maxQueueDelayUs);
  const ctx = ensembleContext(config, hold ? { ...deps, infer: hold.observe(deps.infer) } : deps);
  const raw = config.parameters?.[PIPELINE_CONCURRENCY_PARAMETER]?.string_value;
  const concurrency = raw === undefined ? 2 : Number(raw);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InferError('INVALID_ARG', `parameter '${PIPELINE_CONCURRENCY_PARAMETER}' must be a positive integer for '${config.name}', got '${raw}'`);
  }
  const stats = deps.stats ? guardedStats(deps.stats, deps.log ?? silentLogger, config.name) : undefined;
  const instances = Array.from({ length: concurrency }, () => pipelineInstance(ctx, clock, stats));
  const shapeKey = options.shapeKey;
  // Only requests whose parameters, priority and timeout agree share a pipeline batch.
  const pipelineOptions = { ...options, shapeKey: (r: InferRequest) => shapeKey(r) + requestSemanticsKey(r) };
  const batcher = new DynamicBatcher(pipelineOptions, { instances, clock, stats: deps.stats, log: deps.log, traceCompute: false, ...(hold ? { hold } : {}) });
  const stamp = (r: InferRequest): InferRequest => {
    arrivals.set(r, clock.nowUs());
    return r;
  };
  return {
    enqueue: (request) => batcher.enqueue(stamp(request)),
    enqueueStream: (request, sink) => batcher.enqueueStream(stamp(request), sink),
    get inflight() {
      return batcher.inflight;
    },
    stop: () => batcher.stop(),
  };
}
