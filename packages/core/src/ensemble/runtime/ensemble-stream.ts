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
  const { config } = ctx;
  const steps = config.ensemble_scheduling?.step ?? [];
  const prefix = ensemblePrefix(config.name);
  const wanted = request.outputs && request.outputs.length > 0 ? request.outputs.map((o) => o.name) : config.output.map((o) => o.name);
  const root = new Scope();
  for (const t of request.inputs) root.tensors.set(t.name, t);
  let running = 0;
  let sent = 0;
  let firstError: InferError | undefined;
  let completed = false;
  // The ensemble's reader is full (a slow client): pending until it has room again. A decoupled step
  // is handed it for every response, so its sender waits however its responses reach the client.
  let pressure: Promise<void> | undefined;

  const tryEmit = (scope: Scope): void => {
    if (scope.emitted || firstError) return;
    const values = wanted.map((n) => scope.get(n));
    if (values.some((v) => v === undefined)) return;
    if (scope.parent && !wanted.some((n) => scope.tensors.has(n))) return; // the parent's response, not this iteration's
    scope.emitted = true;
    sent++;
    const outputs: Tensor[] = [];
    values.forEach((t, i) => {
      if (t) outputs.push(adaptTensor(t, wanted[i]!, dimsOf(config, wanted[i]!, 'output'), config.max_batch_size > 0));
    });
    const wait = sink.response({ id: request.id, model: config.name, version: ctx.version, outputs });
    if (wait) {
      const settled: Promise<void> = wait.then(() => {
        if (pressure === settled) pressure = undefined;
      });
      pressure = settled;
    }
  };

  const finishIfDone = (): void => {
    if (running > 0 || completed) return;
    completed = true;
    if (firstError) sink.complete(firstError.message.startsWith(prefix) ? firstError : firstError.withPrefix(prefix));
    else if (sent === 0) {
      sink.complete(new InferError('INTERNAL', `${prefix}unexpected deadlock, at least one output is not set while no more ensemble steps can be made`));
    } else sink.complete();
  };

  const capture = (scope: Scope, index: number, response: InferResponse): void => {
    const produced = new Map(response.outputs.map((o) => [o.name, o]));
    for (const [modelOutput, ensembleTensor] of Object.entries(steps[index]!.output_map)) {
      const t = produced.get(modelOutput);
      scope.tensors.set(ensembleTensor, t ? adaptTensor(t, ensembleTensor, undefined, false) : null);
    }
  };

  const launch = async (scope: Scope, index: number): Promise<void> => {
    const step = steps[index]!;
    const sem = ctx.semaphores[index];
    if (sem) await sem.acquire();
    let streaming = false;
    const done = (): void => {
      sem?.release();
      running--;
      finishIfDone();
    };
    try {
      if (firstError) return;
      if (request.signal?.aborted) throw new InferError('CANCELLED', CANCELLED_MESSAGE);
      const stepConfig = ctx.getModelConfig?.(step.model_name, stepVersion(step));
      const req = stepRequest(request, step, stepConfig, (name) => scope.get(name), stepObservation(ctx, index, observe));
      if (stepConfig?.model_transaction_policy?.decoupled) {
        streaming = true;
        inferStream(req, {
          response: (r) => {
            if (firstError) return;
            const child = new Scope(scope);
            scope.children.push(child);
            capture(child, index, r);
            tryEmit(child);
            schedule(child);
            return pressure;
          },
          complete: (error) => {
            if (error) firstError ??= InferError.from(error);
            done();
          },
        });
        return;
      }
      const response = await ctx.infer(req);
      if (firstError) return;
      capture(scope, index, response);
      tryEmit(scope);
      // New shared tensors may make steps ready in this scope and in every iteration below it.
      const visit = (s: Scope): void => {
        tryEmit(s);
        schedule(s);
        s.children.forEach(visit);
      };
      visit(scope);
    } catch (err) {
      firstError ??= InferError.from(err);
    } finally {
      if (!streaming) done();
    }
  };

  const schedule = (scope: Scope): void => {
    if (firstError) return;
    for (let i = 0; i < steps.length; i++) {
      if (scope.wasStarted(i)) continue;
      if (!Object.values(steps[i]!.input_map).every((name) => scope.get(name) !== undefined)) continue;
      scope.started.add(i);
      running++;
      void launch(scope, i);
    }
  };

  if (request.signal?.aborted) firstError = new InferError('CANCELLED', CANCELLED_MESSAGE);
  schedule(root);
  finishIfDone();
}
