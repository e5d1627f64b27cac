/**
 * Per-step ensemble scheduler (Triton's semantics): each ensemble request is routed through the
 * step DAG at once; batching happens inside the composing models' schedulers. Statistics go to
 * the ensemble's own StatsRecorder (success with total duration; failures with reason OTHER, or
 * CANCELED for cancellation). Decoupled ensembles are not supported: a stream gets one response.
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../../types.ts';
import { batchSizeOf } from '../../tensor/batch.ts';
import { systemClock, type Clock, type Scheduler } from '../../scheduler/scheduler.ts';
import { nullStatsRecorder, type StatsRecorder } from '../../scheduler/stats-recorder.ts';
import { runEnsemble, type EnsembleContext } from './ensemble-run.ts';
import { Semaphore } from './semaphore.ts';

export interface EnsembleDeps {
  readonly version: number;
  readonly infer: (request: InferRequest) => Promise<InferResponse>;
  readonly getModelConfig?: (name: string, version?: number) => ModelConfig | undefined;
  readonly clock?: Clock;
  readonly stats?: StatsRecorder;
}

/** The step-runner context for an ensemble config (one semaphore per step). */
export function ensembleContext(config: ModelConfig, deps: EnsembleDeps): EnsembleContext {
  const steps = config.ensemble_scheduling?.step ?? [];
  const limit = config.ensemble_scheduling?.max_inflight_requests ?? 0;
  return {
    config,
    version: deps.version,
    infer: deps.infer,
    getModelConfig: deps.getModelConfig,
    semaphores: steps.map(() => new Semaphore(limit)),
  };
}

export class EnsembleScheduler implements Scheduler {
  private readonly ctx: EnsembleContext;
  private readonly clock: Clock;
  private readonly stats: StatsRecorder;
  private count = 0;
  private stopped = false;
  private drained: (() => void)[] = [];

  constructor(
    private readonly config: ModelConfig,
    deps: EnsembleDeps,
  ) {
    this.ctx = ensembleContext(config, deps);
    this.clock = deps.clock ?? systemClock;
    this.stats = deps.stats ?? nullStatsRecorder;
  }

  get inflight(): number {
    return this.count;
  }

  async enqueue(request: InferRequest): Promise<InferResponse> {
    if (this.stopped) {
      throw new InferError('UNAVAILABLE', `model '${this.config.name}' version ${this.ctx.version} is not accepting requests (unloading)`);
    }
    batchSizeOf(request, this.config);
    const start = this.clock.nowUs();
    this.count++;
    try {
      const response = await runEnsemble(this.ctx, request);
      this.stats.requestSucceeded((this.clock.nowUs() - start) * 1000, { queueNs: 0, computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 });
      return response;
    } catch (err) {
      const error = InferError.from(err);
      this.stats.requestFailed((this.clock.nowUs() - start) * 1000, error.code === 'CANCELLED' ? 'CANCELED' : 'OTHER', true);
      throw error;
    } finally {
      this.count--;
      if (this.count === 0) for (const d of this.drained.splice(0)) d();
    }
  }

  enqueueStream(request: InferRequest, sink: ResponseSink): void {
    this.enqueue(request).then(
      (r) => {
        sink.response(r);
        sink.complete();
      },
      (e: unknown) => sink.complete(InferError.from(e)),
    );
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }
}
