/**
 * Custom metric operations a model sends from its worker (python-like's MetricFamily): applied on
 * the main thread, where the server's metrics live. An operation that asks for a reply gets its
 * value or its error; a fire-and-forget one that fails is logged, at most ERRORS_LOGGED times.
 */
import { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { MetricOp } from '../metrics/custom-metrics.ts';
import type { Generation } from './host-generation.ts';
import { toWireError } from './protocol.ts';
import type { WorkerInstanceOptions } from './types.ts';

const ERRORS_LOGGED = 20;

export class MetricRelay {
  private errors = 0;

  constructor(
    private readonly label: string,
    private readonly log: Logger,
    private readonly metrics: WorkerInstanceOptions<unknown>['metrics'],
  ) {}

  /** Applies `op`; answers `call` (when given) with the value or the error. */
  apply(gen: Generation, op: MetricOp, call: number | undefined): void {
    let value: number | undefined;
    let error: InferError | undefined;
    try {
      if (!this.metrics) throw new InferError('UNSUPPORTED', 'custom metrics are not available here');
      value = this.metrics.apply(op);
    } catch (e) {
      error = InferError.from(e, 'INVALID_ARG');
    }
    if (call !== undefined) {
      if (!gen.dead) gen.channel.send({ t: 'metric-reply', call, ...(error ? { error: toWireError(error) } : { value: value ?? 0 }) });
      return;
    }
    // The model cannot see this error (the operation was fire-and-forget): say it, without flooding the log.
    if (error && this.errors++ < ERRORS_LOGGED) this.log.error(`${this.label}: custom metric: ${error.message}`);
  }
}
