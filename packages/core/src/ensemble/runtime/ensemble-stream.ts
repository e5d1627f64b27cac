/**
 * Ensembles with decoupled composing models (Triton: the ensemble becomes decoupled). Each
 * response of a decoupled step starts a new *iteration*: a child scope holding that response's
 * outputs, in which the downstream steps run again. A scope whose requested outputs are all set
 * (at least one of them by itself) emits one ensemble response, so a decoupled last step sending
 * three responses yields three ensemble responses. Outputs of steps outside the decoupled branch
 * are shared by every iteration through the parent scope.
 *
 * Errors: the first one wins, no new steps start, in-flight steps drain, then the stream completes
 * with it (prefixed `in ensemble 'E', `); responses already sent stay sent. Completing with no
 * response at all and no error is Triton's "unexpected deadlock".
 */
import { InferError } from '../../errors.ts';
import type { Tensor } from '../../tensor/tensor.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../../types.ts';
import type { EnsembleStep } from '../../config/model-config.ts';
import { CANCELLED_MESSAGE } from '../../scheduler/batch-answers.ts';
import { adaptTensor, dimsOf } from './adapt.ts';
import { ensemblePrefix, stepObservation, stepRequest, stepVersion, type EnsembleContext, type EnsembleObservation } from './ensemble-run.ts';

/** Streaming entry point of the server (decoupled steps answer through it). */
export type InferStream = (request: InferRequest, sink: ResponseSink) => void;

class Scope {
  readonly tensors = new Map<string, Tensor | null>();
  readonly started = new Set<number>();
  readonly children: Scope[] = [];
  emitted = false;
  constructor(readonly parent?: Scope) {}

  get(name: string): Tensor | null | undefined {
    const own = this.tensors.get(name);
    return own !== undefined ? own : this.parent?.get(name);
  }

  wasStarted(step: number): boolean {
    return this.started.has(step) || !!this.parent?.wasStarted(step);
  }
}

/** True when any step's composing model is decoupled (per the configs known now). */
export function hasDecoupledStep(ctx: EnsembleContext): boolean {
  const steps = ctx.config.ensemble_scheduling?.step ?? [];
  return steps.some((s) => !!ctx.getModelConfig?.(s.model_name, stepVersion(s))?.model_transaction_policy?.decoupled);
}

/** Runs `request` through the ensemble, sending every ensemble response to `sink`, then completing it. */
export function runEnsembleStream(ctx: EnsembleContext, inferStream: InferStream, request: InferRequest, sink: ResponseSink, observe?: EnsembleObservation): void {
  new EnsembleStreamRun(ctx, inferStream, request, sink, observe).start();
}

/** One request's run: the scopes of its iterations, the steps running, the first error. */
class EnsembleStreamRun {
  private readonly steps: EnsembleStep[];
  private readonly prefix: string;
  private readonly wanted: string[];
  private readonly root = new Scope();
  private running = 0;
  private sent = 0;
  private firstError: InferError | undefined;
  private completed = false;
  /**
   * The ensemble's reader is full (a slow client): pending until it has room again. A decoupled step
   * is handed it for every response, so its sender waits however its responses reach the client.
   */
  private pressure: Promise<void> | undefined;

  constructor(
    private readonly ctx: EnsembleContext,
    private readonly inferStream: InferStream,
    private readonly request: InferRequest,
    private readonly sink: ResponseSink,
    private readonly observe: EnsembleObservation | undefined,
  ) {
    const { config } = ctx;
    this.steps = config.ensemble_scheduling?.step ?? [];
    this.prefix = ensemblePrefix(config.name);
    this.wanted = request.outputs && request.outputs.length > 0 ? request.outputs.map((o) => o.name) : config.output.map((o) => o.name);
    for (const t of request.inputs) this.root.tensors.set(t.name, t);
  }

  start(): void {
    if (this.request.signal?.aborted) this.firstError = new InferError('CANCELLED', CANCELLED_MESSAGE);
    this.schedule(this.root);
    this.finishIfDone();
  }

  /** Sends the ensemble response of `scope` once its requested outputs are all set. */
  private tryEmit(scope: Scope): void {
    if (scope.emitted || this.firstError) return;
    const { config } = this.ctx;
    const wanted = this.wanted;
    const values = wanted.map((n) => scope.get(n));
    if (values.some((v) => v === undefined)) return;
    if (scope.parent && !wanted.some((n) => scope.tensors.has(n))) return; // the parent's response, not this iteration's
    scope.emitted = true;
    this.sent++;
    const outputs: Tensor[] = [];
    values.forEach((t, i) => {
      if (t) outputs.push(adaptTensor(t, wanted[i]!, dimsOf(config, wanted[i]!, 'output'), config.max_batch_size > 0));
    });
    const wait = this.sink.response({ id: this.request.id, model: config.name, version: this.ctx.version, outputs });
    if (wait) {
      const settled: Promise<void> = wait.then(() => {
        if (this.pressure === settled) this.pressure = undefined;
      });
      this.pressure = settled;
    }
  }

  private finishIfDone(): void {
    if (this.running > 0 || this.completed) return;
    this.completed = true;
    const { firstError, prefix, sink } = this;
    if (firstError) sink.complete(firstError.message.startsWith(prefix) ? firstError : firstError.withPrefix(prefix));
    else if (this.sent === 0) {
      sink.complete(new InferError('INTERNAL', `${prefix}unexpected deadlock, at least one output is not set while no more ensemble steps can be made`));
    } else sink.complete();
  }

  /** Sets the ensemble tensors step `index` produced (null: an output it did not send) in `scope`. */
  private capture(scope: Scope, index: number, response: InferResponse): void {
    const produced = new Map(response.outputs.map((o) => [o.name, o]));
    for (const [modelOutput, ensembleTensor] of Object.entries(this.steps[index]!.output_map)) {
      const t = produced.get(modelOutput);
      scope.tensors.set(ensembleTensor, t ? adaptTensor(t, ensembleTensor, undefined, false) : null);
    }
  }

  /** Runs step `index` in `scope` (its inputs are set), under the step's concurrency bound. */
  private async launch(scope: Scope, index: number): Promise<void> {
    const step = this.steps[index]!;
    const sem = this.ctx.semaphores[index];
    if (sem) await sem.acquire();
    let streaming = false;
    const done = (): void => {
      sem?.release();
      this.running--;
      this.finishIfDone();
    };
    try {
      if (this.firstError) return;
      if (this.request.signal?.aborted) throw new InferError('CANCELLED', CANCELLED_MESSAGE);
      const stepConfig = this.ctx.getModelConfig?.(step.model_name, stepVersion(step));
      const req = stepRequest(this.request, step, stepConfig, (name) => scope.get(name), stepObservation(this.ctx, index, this.observe));
      if (stepConfig?.model_transaction_policy?.decoupled) {
        streaming = true;
        this.streamStep(scope, index, req, done);
        return;
      }
      const response = await this.ctx.infer(req);
      if (this.firstError) return;
      this.capture(scope, index, response);
      this.tryEmit(scope);
      // New shared tensors may make steps ready in this scope and in every iteration below it.
      this.revisit(scope);
    } catch (err) {
      this.firstError ??= InferError.from(err);
    } finally {
      if (!streaming) done();
    }
  }

  /** A decoupled step: each of its responses starts an iteration (a child scope) below `scope`. */
  private streamStep(scope: Scope, index: number, req: InferRequest, done: () => void): void {
    this.inferStream(req, {
      response: (r) => {
        if (this.firstError) return;
        const child = new Scope(scope);
        scope.children.push(child);
        this.capture(child, index, r);
        this.tryEmit(child);
        this.schedule(child);
        return this.pressure;
      },
      complete: (error) => {
        if (error) this.firstError ??= InferError.from(error);
        done();
      },
    });
  }

  private revisit(scope: Scope): void {
    this.tryEmit(scope);
    this.schedule(scope);
    scope.children.forEach((child) => this.revisit(child));
  }

  /** Starts every step of `scope` whose inputs are all set and that no scope above started. */
  private schedule(scope: Scope): void {
    if (this.firstError) return;
    for (let i = 0; i < this.steps.length; i++) {
      if (scope.wasStarted(i)) continue;
      if (!Object.values(this.steps[i]!.input_map).every((name) => scope.get(name) !== undefined)) continue;
      scope.started.add(i);
      this.running++;
      void this.launch(scope, i);
    }
  }
}
