/**
 * How a batcher answers the requests it accepted, times their executions and records both: one
 * module for the dynamic batcher and the sequence batcher, so a rule about answering is written,
 * and fixed, once.
 *
 * - A unary call to a decoupled model expects exactly one response; a stream gets each response,
 *   then one `complete`.
 * - Every accepted request is answered exactly once (`finish`), and recorded then: its success
 *   with the compute of the execution that carried it (also added to an ensemble's compute sum), or
 *   its failure's reason; its per-response statistics; its first response. A request a pipeline
 *   batch carries for several counts once for each (`InferRequest.carried`).
 * - With `preserve_ordering`, outcomes are handed over in arrival order (hand-over.ts).
 * - An execution's timings are those its instance reported, else its whole wall time as infer
 *   time; they are recorded once per execution and reported as COMPUTE_* to the traces it carried.
 * - `drain()` resolves once every accepted request was answered.
 */
import { InferError } from '../errors.ts';
import type { ExecuteContext, ExecuteOutput, ExecuteTimings, ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import { reportCompute } from '../trace/request-trace.ts';
import type { CallFrame, InferRequest, InferResponse, ResponseSink, TokenCount } from '../types.ts';
import type { CallCycleGuard } from './call-cycles.ts';
import type { Clock } from './scheduler.ts';
import type { FailureReason, StatsRecorder } from './stats-recorder.ts';
import { HandOver, type HandedOver, type Outcome } from './hand-over.ts';

export type { Deliver, Outcome } from './hand-over.ts';

/** Triton's status for a cancelled request carries no text; we say what happened. */
export const CANCELLED_MESSAGE = 'request cancelled';

/** A batcher's admission: queues `request`, to be answered through `deliver` (a decoupled model's responses go to `sink`). */
export type Accept = (request: InferRequest, deliver: (outcome: Outcome) => void, sink?: ResponseSink) => void;

/** Timings of an execution. */
export type Timings = Required<ExecuteTimings>;

const NO_COMPUTE: Timings = { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 };

/** What answering reads and keeps of a request a batcher accepted. */
export interface AnsweredRequest extends HandedOver {
  readonly request: InferRequest;
  /** When it was accepted (µs, the batcher's clock). */
  readonly arrivalUs: number;
  /** Its rows (what the execution statistics count). */
  readonly batchSize: number;
  /** Where a decoupled model's responses go. */
  readonly sink?: ResponseSink;
  /** `queued` until it leaves the queue; `retry`: waiting to be re-run after a crash; `done` once answered. */
  state: 'queued' | 'retry' | 'running' | 'done';
  /** Its time in the queue, set when it left it. */
  queueNs: number;
  /** Responses sent so far (decoupled): the index of the next one in the response statistics. */
  responses: number;
  /** When the model started on the response to come: the execution's start, then each response. */
  responseStartUs?: number;
  /** Own slots this request's callers hold (BLS), released when it is answered. */
  holds?: CallFrame[] | undefined;
  /** Its queue timeout, cancelled when it is answered. */
  timer?: { cancel(): void } | undefined;
  /** Stops listening on the request's signal (see abort-listeners.ts). */
  unlisten?: () => void;
}

export interface BatchAnswersOptions<E extends AnsweredRequest> {
  readonly model: string;
  readonly clock: Clock;
  /** Guarded (guarded-stats.ts): a throwing hook never stops an answer. */
  readonly stats: StatsRecorder;
  readonly log: Logger;
  /** Decoupled model: executions go through `executeDecoupled`, responses to each request's sink. */
  readonly decoupled: boolean;
  readonly cycles: CallCycleGuard;
  /** The batcher's admission (enqueue and enqueueStream go through it). */
  readonly accept: Accept;
  /** Report COMPUTE_* to the traces of executed requests (false for a pipeline ensemble's batcher, whose steps trace themselves). */
  readonly traceCompute?: boolean;
  /** Hand outcomes over in arrival order (`preserve_ordering`). */
  readonly preserveOrdering?: boolean;
  /** Called once a request was answered (the sequence batcher's oldest strategy offers the slot's next request). */
  readonly answered?: (entry: E) => void;
  /** Called when the last request was answered after `drain()` was asked for (timers may stop). */
  readonly drained?: () => void;
}

/** Answers, times and records the requests of one batcher. */
export class BatchAnswers<E extends AnsweredRequest> {
  private readonly opts: BatchAnswersOptions<E>;
  private readonly stats: StatsRecorder;
  private readonly clock: Clock;
  private readonly traceCompute: boolean;
  private count = 0;
  private drainWaiters: (() => void)[] = [];
  private readonly handOver: HandOver<E>;

  constructor(options: BatchAnswersOptions<E>) {
    this.opts = options;
    this.stats = options.stats;
    this.clock = options.clock;
    this.traceCompute = options.traceCompute !== false;
    this.handOver = new HandOver<E>(options.model, options.log, options.preserveOrdering === true);
  }

  /** Requests accepted and not answered yet. */
  get inflight(): number {
    return this.count;
  }

  // ---- calls in --------------------------------------------------------------------------

  /** A unary call: resolves with its one response. A decoupled model must send exactly one. */
  unary(request: InferRequest): Promise<InferResponse> {
    return new Promise<InferResponse>((resolve, reject) => {
      if (!this.opts.decoupled) {
        this.opts.accept(request, (o) => (o && !InferError.is(o) ? resolve(o) : reject(o ?? new InferError('INTERNAL', 'no response'))));
        return;
      }
      this.stream(request, oneResponseSink(this.opts.model, resolve, reject));
    });
  }

  /** A streaming call: each response to `sink`, then `complete` (with the error that ended it). */
  stream(request: InferRequest, sink: ResponseSink): void {
    this.opts.accept(
      request,
      (o) => {
        if (InferError.is(o)) sink.complete(o);
        else {
          if (o) sink.response(o);
          sink.complete();
        }
      },
      this.opts.decoupled ? sink : undefined,
    );
  }

  /** Resolves once every accepted request was answered. */
  drain(): Promise<void> {
    if (this.count === 0) {
      this.opts.drained?.();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** A request refused before it was queued: recorded as failed with `reason` (none: not counted), then answered. */
  refuse(request: InferRequest, deliver: (outcome: Outcome) => void, error: InferError, reason?: FailureReason): void {
    if (reason) this.failed(request, 0, reason, false);
    deliver(error);
  }

  /** A request was queued: counted in flight and in the queue, QUEUE_START on its trace. */
  admitted(entry: E): void {
    this.count++;
    for (let i = weightOf(entry.request); i > 0; i--) this.stats.requestQueued();
    entry.request.trace?.report('QUEUE_START', entry.arrivalUs * 1000);
    this.handOver.accepted(entry);
  }

  /** A request left the queue for an execution at `nowUs`. */
  dequeued(entry: E, nowUs: number): void {
    entry.queueNs = (nowUs - entry.arrivalUs) * 1000;
    for (let i = weightOf(entry.request); i > 0; i--) this.stats.requestDequeued(entry.queueNs);
  }

  // ---- executions ------------------------------------------------------------------------

  /**
   * An execution of `batchSize` rows that started at `startUs` ended now: its timings (those the
   * instance `reported`, else its wall time), recorded with its `tokens` when it padded rows, and
   * reported to the traces of `entries`.
   */
  executed(entries: readonly E[], batchSize: number, startUs: number, reported?: ExecuteTimings, tokens?: TokenCount): Timings {
    const timings = timingsOf(reported, (this.clock.nowUs() - startUs) * 1000);
    this.stats.execution(batchSize, timings);
    if (tokens) this.stats.tokens?.(tokens);
    if (this.traceCompute) for (const e of entries) if (e.request.trace) reportCompute(e.request.trace, startUs * 1000, timings);
    return timings;
  }

  /**
   * Answers each request of a completed execution with its own result: an error result fails that
   * request alone, a response goes to `succeed` (which answers it). `rows[i]` is the request of
   * row i, undefined for a filler row (its result is discarded). An instance that returned another
   * number of results than rows fails them all.
   */
  answerEach(rows: readonly (E | undefined)[], output: ExecuteOutput, succeed: (entry: E, response: InferResponse, row: number) => void): void {
    const results = output?.results ?? [];
    if (results.length !== rows.length) {
      const error = new InferError('INTERNAL', `model '${this.opts.model}' instance returned ${results.length} results for ${rows.length} requests`);
      for (const e of rows) if (e) this.finish(e, error, 'BACKEND');
      return;
    }
    rows.forEach((e, i) => {
      if (!e) return;
      const result = results[i]!;
      if (InferError.is(result)) this.finish(e, result, 'BACKEND');
      else succeed(e, result, i);
    });
  }

  /**
   * One decoupled execution of `requests` (`rows[i]` the request of row i, undefined for a filler
   * row). Each response is counted as it is sent; a request may complete before the execution
   * returns its timings: it is answered at once, and its success statistics wait for them. An
   * execution that fails as a whole goes to `failed` (after its timings are recorded).
   */
  async runDecoupled(
    instance: ModelInstance,
    rows: readonly (E | undefined)[],
    requests: readonly InferRequest[],
    run: { readonly signal: AbortSignal; readonly context: ExecuteContext; readonly startUs: number; readonly batchSize: number },
    failed: (entries: readonly E[], error: InferError) => void,
  ): Promise<void> {
    const entries = rows.filter((e): e is E => e !== undefined);
    const exec = instance.executeDecoupled;
    if (!exec) {
      this.failAll(entries, new InferError('INTERNAL', `model '${this.opts.model}' is decoupled but its instance has no executeDecoupled`), 'OTHER');
      return;
    }
    let timings: Timings | undefined;
    const awaitingTimings: { entry: E; totalNs: number }[] = [];
    for (const e of entries) e.responseStartUs = run.startUs;
    const sinks = rows.map((e) =>
      e ? this.decoupledSink(e, () => timings, (totalNs) => awaitingTimings.push({ entry: e, totalNs })) : IGNORED_SINK,
    );
    try {
      timings = this.executed(entries, run.batchSize, run.startUs, (await exec.call(instance, requests, sinks, run.signal, run.context)) ?? undefined);
    } catch (err) {
      timings = this.executed(entries, run.batchSize, run.startUs);
      failed(entries, InferError.from(err));
    }
    for (const { entry } of awaitingTimings) entry.request.computeSink?.add(timings);
    for (const { entry, totalNs } of awaitingTimings) this.succeeded(entry, totalNs, timings);
  }

  /** The sink a decoupled execution sends `entry`'s responses to. */
  private decoupledSink(entry: E, timings: () => Timings | undefined, awaitTimings: (totalNs: number) => void): ResponseSink {
    return {
      response: (r) => {
        if (entry.state === 'done') return;
        const now = this.clock.nowUs();
        if (entry.responses === 0) this.stats.firstResponse?.((now - entry.arrivalUs) * 1000);
        this.stats.response?.(entry.responses++, 'success', { inferNs: (now - (entry.responseStartUs ?? now)) * 1000, outputNs: 0 });
        entry.responseStartUs = now;
        return entry.sink?.response(r);
      },
      complete: (error) => {
        const known = timings();
        if (error) this.finish(entry, InferError.from(error), 'BACKEND');
        else if (known) this.finish(entry, null, undefined, known);
        else {
          const totalNs = this.finish(entry, null, undefined, 'later');
          if (totalNs !== undefined) awaitTimings(totalNs);
        }
      },
    };
  }

  /** A bug or a throwing callback while handling results: log, answer whoever is still waiting. */
  internalError(entries: readonly E[], err: unknown): void {
    const error = InferError.from(err);
    this.opts.log.error(`model '${this.opts.model}': scheduler error while finishing a batch: ${error.message}`);
    this.failAll(entries, error, 'OTHER');
  }

  failAll(entries: readonly E[], error: InferError, reason: FailureReason): void {
    for (const e of entries) this.finish(e, error, reason);
  }

  // ---- answers ---------------------------------------------------------------------------

  /**
   * Answers a request once. Success statistics use `timings`, or are left to the caller with
   * `'later'` (decoupled: the execution's timings are not known yet). Returns the request's total
   * time, or undefined when it was answered already.
   */
  finish(entry: E, outcome: Outcome, reason?: FailureReason, timings?: Timings | 'later'): number | undefined {
    if (entry.state === 'done') return undefined;
    const dequeued = entry.state !== 'queued';
    entry.state = 'done';
    entry.timer?.cancel();
    entry.timer = undefined;
    entry.unlisten?.();
    if (entry.holds) this.opts.cycles.release(entry.holds);
    const nowUs = this.clock.nowUs();
    const totalNs = (nowUs - entry.arrivalUs) * 1000;
    if (reason) this.failed(entry.request, totalNs, reason, dequeued);
    else if (timings !== 'later') {
      const t = timings ?? NO_COMPUTE;
      this.succeeded(entry, totalNs, t);
      entry.request.computeSink?.add(t);
      if (!this.opts.decoupled) this.stats.firstResponse?.(totalNs);
    }
    if (dequeued && entry.responseStartUs !== undefined) {
      for (let i = weightOf(entry.request); i > 0; i--) this.lastResponse(entry, reason, timings, nowUs - entry.responseStartUs);
    }
    this.handOver.answered(entry, outcome, reason === 'CANCELED');
    this.opts.answered?.(entry);
    this.count--;
    if (this.count === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      this.opts.drained?.();
      for (const w of waiters) w();
    }
    return totalNs;
  }

  /** Success statistics of one request: once per request it carries (pipeline batches carry several). */
  private succeeded(entry: E, totalNs: number, t: Timings): void {
    const carried = entry.request.carried;
    if (!carried) this.stats.requestSucceeded(totalNs, { queueNs: entry.queueNs, ...t, batchSize: entry.batchSize });
    else for (const c of carried) this.stats.requestSucceeded(totalNs + c.priorQueueNs, { queueNs: entry.queueNs + c.priorQueueNs, ...t });
  }

  private failed(request: InferRequest, totalNs: number, reason: FailureReason, dequeued: boolean): void {
    const carried = request.carried;
    if (!carried) this.stats.requestFailed(totalNs, reason, dequeued);
    else for (const c of carried) this.stats.requestFailed(totalNs + c.priorQueueNs, reason, dequeued);
  }

  /**
   * Per-response statistics of how a request the model worked on ended: its one response (or error)
   * when the model is not decoupled; for a decoupled model, the error or cancellation that ended
   * the stream, or an empty response when it ended without any (its responses were counted as sent).
   */
  private lastResponse(entry: E, reason: FailureReason | undefined, timings: Timings | 'later' | undefined, sinceStartUs: number): void {
    const record = this.stats.response;
    if (!record) return;
    const elapsedNs = Math.max(0, sinceStartUs) * 1000;
    const index = entry.responses;
    if (reason === 'CANCELED') record(index, 'cancel', { inferNs: elapsedNs, outputNs: 0 });
    else if (reason) record(index, 'fail', { inferNs: elapsedNs, outputNs: 0 });
    else if (this.opts.decoupled) {
      if (index === 0) record(0, 'empty', { inferNs: elapsedNs, outputNs: 0 });
    } else {
      const t = timings && timings !== 'later' ? timings : undefined;
      record(0, 'success', t ? { inferNs: t.computeInputNs + t.computeInferNs, outputNs: t.computeOutputNs } : { inferNs: elapsedNs, outputNs: 0 });
    }
  }

}


/** The sink of a unary call to decoupled model `model`: resolves with its one response; more or none is refused. */
export function oneResponseSink(model: string, resolve: (response: InferResponse) => void, reject: (error: InferError) => void): ResponseSink {
  const responses: InferResponse[] = [];
  return {
    response: (r) => void responses.push(r),
    complete: (error) => {
      if (error) reject(error);
      else if (responses.length === 1) resolve(responses[0]!);
      else reject(new InferError('UNSUPPORTED', `model '${model}' is decoupled and sent ${responses.length} responses; use a streaming call`));
    },
  };
}

/** The sink of a filler row's responses: discarded. */
const IGNORED_SINK: ResponseSink = { response() {}, complete() {} };

/** An execution's timings: those the instance reported, else `elapsedNs` as infer time. */
function timingsOf(t: ExecuteTimings | undefined, elapsedNs: number): Timings {
  if (t && (t.computeInputNs !== undefined || t.computeInferNs !== undefined || t.computeOutputNs !== undefined)) {
    return { computeInputNs: t.computeInputNs ?? 0, computeInferNs: t.computeInferNs ?? 0, computeOutputNs: t.computeOutputNs ?? 0 };
  }
  return { computeInputNs: 0, computeInferNs: elapsedNs, computeOutputNs: 0 };
}

/** How many requests an entry stands for in the statistics (a pipeline batch counts each it carries). */
export function weightOf(request: InferRequest): number {
  return request.carried?.length ?? 1;
}
