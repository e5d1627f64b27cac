/**
 * Per-step ensemble scheduler (Triton's semantics): each ensemble request is routed through the
 * step DAG at once; batching happens inside the composing models' schedulers. Statistics go to
 * the ensemble's own StatsRecorder (success with total duration; failures with reason OTHER, or
 * CANCELED for cancellation). When a composing model is decoupled and the server passed
 * `inferStream`, the ensemble is decoupled too (see ensemble-stream.ts): `enqueueStream` sends
 * every ensemble response; a unary `enqueue` then needs exactly one.
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import type { CallFrame, InferRequest, InferResponse, ResponseSink } from '../../types.ts';
import { newCallFrame } from '../../scheduler/call-cycles.ts';
import { batchSizeOf } from '../../tensor/batch.ts';
import { systemClock, type Clock, type Scheduler } from '../../scheduler/scheduler.ts';
import { nullStatsRecorder, type StatsRecorder } from '../../scheduler/stats-recorder.ts';
import { guardedStats } from '../../scheduler/guarded-stats.ts';
import { oneResponseSink } from '../../scheduler/batch-answers.ts';
import { silentLogger, type Logger } from '../../logger.ts';
import { firstStepIndex, runEnsemble, type EnsembleContext } from './ensemble-run.ts';
import { ComputeTotal } from './compute-total.ts';
import { hasDecoupledStep, runEnsembleStream, type InferStream } from './ensemble-stream.ts';
import { Semaphore } from './semaphore.ts';
import { lengthGroupRunner } from './length-batching.ts';
import { tokenBudgetOf } from '../../scheduler/token-budget.ts';

export interface EnsembleDeps {
  readonly version: number;
  readonly infer: (request: InferRequest) => Promise<InferResponse>;
  /** Streaming entry point; needed for decoupled composing models. */
  readonly inferStream?: InferStream;
  readonly getModelConfig?: (name: string, version?: number) => ModelConfig | undefined;
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
  readonly log?: Logger;
}

/** The step-runner context for an ensemble config (one semaphore per step). */
export function ensembleContext(config: ModelConfig, deps: EnsembleDeps): EnsembleContext {
  const steps = config.ensemble_scheduling?.step ?? [];
  const limit = config.ensemble_scheduling?.max_inflight_requests ?? 0;
  const ctx: EnsembleContext = {
    config,
    version: deps.version,
    infer: deps.infer,
    getModelConfig: deps.getModelConfig,
    // No semaphores when unlimited: acquiring one would still cost a microtask per step.
    semaphores: limit > 0 ? steps.map(() => new Semaphore(limit)) : [],
    firstStep: firstStepIndex(config),
  };
  const budget = tokenBudgetOf(config);
  return budget ? { ...ctx, lengthGroups: lengthGroupRunner(ctx, budget) } : ctx;
}

export class EnsembleScheduler implements Scheduler {
  private readonly ctx: EnsembleContext;
  private readonly clock: Clock;
  private readonly stats: StatsRecorder;
  private readonly inferStream: InferStream | undefined;
  private readonly frame: CallFrame;
  private count = 0;
  private stopped = false;
  private drained: (() => void)[] = [];

  constructor(
    private readonly config: ModelConfig,
    deps: EnsembleDeps,
  ) {
    this.ctx = ensembleContext(config, deps);
    this.clock = deps.clock ?? systemClock;
    this.stats = deps.stats ? guardedStats(deps.stats, deps.log ?? silentLogger, config.name) : nullStatsRecorder;
    this.inferStream = deps.inferStream;
    this.frame = newCallFrame(config.name);
  }

  private streaming(): InferStream | undefined {
    return this.inferStream && hasDecoupledStep(this.ctx) ? this.inferStream : undefined;
  }

  get inflight(): number {
    return this.count;
  }

  async enqueue(incoming: InferRequest): Promise<InferResponse> {
    const batchSize = this.admit(incoming);
    const request = this.named(incoming);
    const stream = this.streaming();
    const start = this.begin(request);
    const total = new ComputeTotal();
    try {
      const response = stream ? await this.collectOne(stream, request, total) : await runEnsemble(this.ctx, request, { computeSink: total });
      this.succeeded(start, request, batchSize, total);
      return response;
    } catch (err) {
      throw this.failed(start, err);
    } finally {
      this.end();
    }
  }

  enqueueStream(request: InferRequest, sink: ResponseSink): void {
    const stream = this.streaming();
    if (!stream) {
      this.enqueue(request).then(
        (r) => {
          sink.response(r);
          sink.complete();
        },
        (e: unknown) => sink.complete(InferError.from(e)),
      );
      return;
    }
    let batchSize: number;
    try {
      batchSize = this.admit(request);
    } catch (err) {
      sink.complete(InferError.from(err));
      return;
    }
    const start = this.begin(request);
    const total = new ComputeTotal();
    runEnsembleStream(
      this.ctx,
      stream,
      this.named(request),
      {
        response: (r) => sink.response(r),
        complete: (error) => {
          if (error) sink.complete(this.failed(start, error));
          else {
            this.succeeded(start, request, batchSize, total);
            sink.complete();
          }
          this.end();
        },
      },
      { computeSink: total },
    );
  }

  private collectOne(stream: InferStream, request: InferRequest, total: ComputeTotal): Promise<InferResponse> {
    return new Promise((resolve, reject) => {
      runEnsembleStream(this.ctx, stream, request, oneResponseSink(this.config.name, resolve, reject), { computeSink: total });
    });
  }

  /**
   * A BLS call's steps name this ensemble in their callers, so a cycle through it reads
   * `A -> E -> A`. (It holds no slot: only a model's slots are ever waited on.)
   */
  private named(request: InferRequest): InferRequest {
    return request.callers && request.callers.length > 0 ? { ...request, callers: [...request.callers, this.frame] } : request;
  }

  /** Throws UNAVAILABLE after stop() and Triton's batch-size errors; returns the request's batch size. */
  private admit(request: InferRequest): number {
    if (this.stopped) {
      throw new InferError('UNAVAILABLE', `model '${this.config.name}' version ${this.ctx.version} is not accepting requests (unloading)`);
    }
    return batchSizeOf(request, this.config);
  }

  private begin(request: InferRequest): number {
    this.count++;
    const now = this.clock.nowUs();
    request.trace?.report('QUEUE_START', now * 1000);
    return now;
  }

  private end(): void {
    this.count--;
    if (this.count === 0) for (const d of this.drained.splice(0)) d();
  }

  /**
   * Triton's ensemble statistics (EnsembleContext's RequestTracker): the request's end-to-end time,
   * the sum of its composing models' compute, and one execution of its batch size. A nested
   * ensemble adds its sum to the outer ensemble's.
   */
  private succeeded(startUs: number, request: InferRequest, batchSize: number, total: ComputeTotal): void {
    const totalNs = (this.clock.nowUs() - startUs) * 1000;
    this.stats.requestSucceeded(totalNs, { queueNs: 0, ...total.durations(), batchSize: Math.max(1, batchSize) });
    this.stats.firstResponse?.(totalNs);
    request.computeSink?.add(total.durations());
  }

  private failed(startUs: number, err: unknown): InferError {
    const error = InferError.from(err);
    this.stats.requestFailed((this.clock.nowUs() - startUs) * 1000, error.code === 'CANCELLED' ? 'CANCELED' : 'OTHER', true);
    return error;
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }
}
