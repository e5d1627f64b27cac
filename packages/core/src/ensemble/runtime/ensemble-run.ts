/**
 * Runs one request through an ensemble's step DAG with Triton's run-time semantics
 * (docs/triton-compatibility.md §5): every step whose inputs are ready becomes a request to the server's
 * `infer` (so composing models' own schedulers batch it); independent steps run concurrently;
 * the first error wins, in-flight steps drain, and a single error prefixed `in ensemble 'E', `
 * is returned. Cancellation travels with the request's AbortSignal to every step.
 */
import { InferError } from '../../errors.ts';
import { toNumber, type EnsembleStep, type ModelConfig } from '../../config/model-config.ts';
import type { Tensor } from '../../tensor/tensor.ts';
import type { CarriedRequest, ComputeSink, InferRequest, InferResponse, TokenCount } from '../../types.ts';
import { CANCELLED_MESSAGE } from '../../scheduler/batch-answers.ts';
import { adaptTensor, dimsOf } from './adapt.ts';
import type { Semaphore } from './semaphore.ts';

export interface EnsembleContext {
  readonly config: ModelConfig;
  readonly version: number;
  readonly infer: (request: InferRequest) => Promise<InferResponse>;
  readonly getModelConfig?: (name: string, version?: number) => ModelConfig | undefined;
  /** One per step (`max_inflight_requests`), shared by all requests of this ensemble; empty when unlimited. */
  readonly semaphores: readonly Semaphore[];
  /** See {@link firstStepIndex}. */
  readonly firstStep: number;
  /**
   * Length-aware batching (`tritium.batch_tokens`, length-batching.ts): runs every step, regrouping
   * the rows by length after the step that produces the lengths. Undefined: steps run as one batch.
   */
  readonly lengthGroups?: (request: InferRequest, tensors: EnsembleTensors, observe: EnsembleObservation | undefined) => Promise<void>;
}

/** Prefix Triton puts on every ensemble error. */
export function ensemblePrefix(name: string): string {
  return `in ensemble '${name}', `;
}

/** The version a step asks for; undefined for -1 (the version policy's choice). */
export function stepVersion(step: EnsembleStep): number | undefined {
  const v = toNumber(step.model_version ?? -1);
  return v >= 0 ? v : undefined;
}

/**
 * The internal request for one step: inputs renamed and batch-adapted for the composing model,
 * requested outputs = the step's output_map keys; id, parameters, priority, timeout, sequence and the
 * cancellation signal copied from the ensemble request (as Triton does), and its BLS callers.
 */
export function stepRequest(
  request: InferRequest,
  step: EnsembleStep,
  stepConfig: ModelConfig | undefined,
  lookup: (ensembleTensor: string) => Tensor | null | undefined,
  observe?: StepObservation,
): InferRequest {
  const version = stepVersion(step);
  const batching = (stepConfig?.max_batch_size ?? 0) > 0;
  const inputs: Tensor[] = [];
  for (const [modelInput, ensembleTensor] of Object.entries(step.input_map)) {
    const t = lookup(ensembleTensor);
    if (t) inputs.push(adaptTensor(t, modelInput, dimsOf(stepConfig, modelInput, 'input'), batching));
  }
  return {
    id: request.id,
    model: step.model_name,
    ...(version !== undefined ? { version } : {}),
    inputs,
    outputs: Object.keys(step.output_map).map((name) => ({ name })),
    ...(request.parameters ? { parameters: request.parameters } : {}),
    ...(request.priority !== undefined ? { priority: request.priority } : {}),
    ...(request.timeoutUs !== undefined ? { timeoutUs: request.timeoutUs } : {}),
    // Triton gives every step the ensemble request's correlation ID and sequence flags.
    ...(request.sequence ? { sequence: request.sequence } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.callers ? { callers: request.callers } : {}),
    ...(request.preformed ? { preformed: true } : {}),
    ...(request.trace ? { trace: request.trace.spawnChild() } : {}),
    ...(observe?.computeSink ? { computeSink: observe.computeSink } : {}),
    ...(observe?.carried ? { carried: observe.carried } : {}),
    ...(observe?.tokens ? { tokens: observe.tokens } : {}),
  };
}

/**
 * What an ensemble passes its step requests besides data: where they add their compute time (summed
 * into the ensemble's statistics, as Triton does) and, in a pipeline batch, the ensemble requests
 * the merged request carries (`firstCarried` for the steps that read only ensemble inputs: their
 * queue time includes the wait in the ensemble's batcher).
 */
export interface EnsembleObservation {
  readonly computeSink?: ComputeSink;
  readonly carried?: readonly CarriedRequest[];
  readonly firstCarried?: readonly CarriedRequest[];
  /** Rows of each carried request, in order (a pipeline batch: for length groups to count each request once). */
  readonly carriedRows?: readonly number[];
  /** Length-aware batching: the tokens of each length group, for the ensemble's own statistics. */
  readonly groupTokens?: (tokens: TokenCount) => void;
  /** Length-aware batching, inside one length group: the group's tokens for step `index`, if it reads a length-cut tensor. */
  readonly stepTokens?: (index: number) => TokenCount | undefined;
}

interface StepObservation {
  readonly computeSink?: ComputeSink;
  readonly carried?: readonly CarriedRequest[];
  /** The length group's tokens, on the steps that read its length-cut tensors. */
  readonly tokens?: TokenCount;
}

/** The step that carries the ensemble batcher's wait: the first (in config order) fed by ensemble inputs only. */
export function firstStepIndex(config: ModelConfig): number {
  const steps = config.ensemble_scheduling?.step ?? [];
  const inputs = new Set(config.input.map((i) => i.name));
  const i = steps.findIndex((s) => Object.values(s.input_map).every((t) => inputs.has(t)));
  return Math.max(0, i);
}

/** The observation for step `index` of `ctx`. */
export function stepObservation(ctx: EnsembleContext, index: number, observe: EnsembleObservation | undefined): StepObservation | undefined {
  if (!observe) return undefined;
  const carried = index === ctx.firstStep && observe.firstCarried ? observe.firstCarried : observe.carried;
  const tokens = observe.stepTokens?.(index);
  return { computeSink: observe.computeSink, carried, ...(tokens ? { tokens } : {}) };
}

/** Ensemble tensor name → value; null marks an output a step did not produce (placeholder). */
export type EnsembleTensors = Map<string, Tensor | null>;

/** Runs `request` (addressed to the ensemble) through its steps; resolves with the ensemble response. */
export async function runEnsemble(ctx: EnsembleContext, request: InferRequest, observe?: EnsembleObservation): Promise<InferResponse> {
  const tensors: EnsembleTensors = new Map();
  for (const t of request.inputs) tensors.set(t.name, t);
  if (ctx.lengthGroups) await ctx.lengthGroups(request, tensors, observe);
  else await runSteps(ctx, request, tensors, undefined, observe);
  return ensembleResponse(ctx, request, tensors);
}

/** The ensemble's response to `request` from the tensors its steps produced (Triton's deadlock error when one is missing). */
export function ensembleResponse(ctx: EnsembleContext, request: InferRequest, tensors: ReadonlyMap<string, Tensor | null>): InferResponse {
  const { config } = ctx;
  const wanted = request.outputs && request.outputs.length > 0 ? request.outputs.map((o) => o.name) : config.output.map((o) => o.name);
  const outputs: Tensor[] = [];
  for (const name of wanted) {
    const t = tensors.get(name);
    if (t === undefined) {
      throw new InferError('INTERNAL', `${ensemblePrefix(config.name)}unexpected deadlock, at least one output is not set while no more ensemble steps can be made`);
    }
    if (t) outputs.push(adaptTensor(t, name, dimsOf(config, name, 'output'), config.max_batch_size > 0));
  }
  return { id: request.id, model: config.name, version: ctx.version, outputs };
}

/** The first error of several step runs that share one ensemble request (its length groups): once set, none starts a step. */
export interface SharedFailure {
  error?: InferError;
}

/**
 * Runs the steps of `only` (every step when undefined) whose inputs are in `tensors`, adding their
 * outputs to it, until none can start. Rejects with the first error, prefixed, once the steps in
 * flight have drained.
 */
export function runSteps(
  ctx: EnsembleContext,
  request: InferRequest,
  tensors: EnsembleTensors,
  only: ReadonlySet<number> | undefined,
  observe?: EnsembleObservation,
  shared?: SharedFailure,
): Promise<void> {
  const steps = ctx.config.ensemble_scheduling?.step ?? [];
  const prefix = ensemblePrefix(ctx.config.name);
  const started = steps.map((_, i) => only !== undefined && !only.has(i));
  let running = 0;
  let firstError: InferError | undefined;

  return new Promise<void>((resolve, reject) => {
    const finishIfDone = (): void => {
      if (running > 0) return;
      if (firstError) reject(firstError.message.startsWith(prefix) ? firstError : firstError.withPrefix(prefix));
      else resolve();
    };

    const launch = async (index: number): Promise<void> => {
      const step = steps[index]!;
      const sem = ctx.semaphores[index];
      if (sem) await sem.acquire();
      try {
        if (firstError || shared?.error) return;
        if (request.signal?.aborted) throw new InferError('CANCELLED', CANCELLED_MESSAGE);
        const stepConfig = ctx.getModelConfig?.(step.model_name, stepVersion(step));
        const response = await ctx.infer(stepRequest(request, step, stepConfig, (name) => tensors.get(name), stepObservation(ctx, index, observe)));
        if (firstError) return;
        const produced = new Map(response.outputs.map((o) => [o.name, o]));
        for (const [modelOutput, ensembleTensor] of Object.entries(step.output_map)) {
          const t = produced.get(modelOutput);
          tensors.set(ensembleTensor, t ? adaptTensor(t, ensembleTensor, undefined, false) : null);
        }
      } catch (err) {
        firstError ??= InferError.from(err);
        if (shared) shared.error ??= firstError;
      } finally {
        sem?.release();
        running--;
        schedule();
        finishIfDone();
      }
    };

    const schedule = (): void => {
      if (firstError || shared?.error) return;
      for (let i = 0; i < steps.length; i++) {
        if (started[i]) continue;
        const ready = Object.values(steps[i]!.input_map).every((name) => tensors.has(name));
        if (!ready) continue;
        started[i] = true;
        running++;
        void launch(i);
      }
    };

    if (request.signal?.aborted) firstError = new InferError('CANCELLED', CANCELLED_MESSAGE);
    schedule();
    finishIfDone();
  });
}
