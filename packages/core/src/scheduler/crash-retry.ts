/**
 * Poison isolation through crashes (Tritium's, not Triton's). When an instance fails while running
 * a batch of several requests (its worker exited, threw, ran out of heap, or was killed for
 * overrunning its execute timeout: see instance-failure.ts), the batch's requests are not failed
 * together: each is re-run once, alone, ahead of the queue, on a healthy instance or on the crashed
 * one once it restarted. The request that crashes its instance again, alone, is the cause: it fails
 * alone with that crash's error, and its neighbours get their results. A request that crashed an
 * instance running alone is the cause at once (crashes are taken as deterministic, as the bisection
 * of poison-isolation.ts takes errors). Bisecting instead would cost a crash and a restart per
 * level, and re-run each request up to log2(n) times: a crash costs far more than an execution.
 *
 * Bounds: a request is re-run at most once; not once its queue policy's timeout (from its arrival)
 * has passed, nor after it was cancelled or its own `timeout` expired (its signal answers it then,
 * wherever it is); a decoupled request is re-run only while none of its responses was sent (its
 * client would otherwise see them twice). The sequence batcher never re-runs a request: the crash
 * lost the state the model held for its sequences (sequence-batcher.ts).
 *
 * A crash while a request is re-run alone runs under `ExecuteContext.crashRetry`: the worker host
 * counts it in the instance's row of crashes but never takes the instance down for it (the crash is
 * pinned on a request, not on the model), and a successful execution ends the row: a model whose
 * crashes all come from identifiable requests keeps serving, while one that crashes on everything
 * still goes down at its next crash of fresh work.
 */
import type { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { InferRequest } from '../types.ts';
import type { Clock } from './scheduler.ts';
import type { StatsRecorder } from './stats-recorder.ts';

/** What the retry decision reads of a request of a crashed batch. */
export interface RetryCandidate {
  /** When it arrived (µs, the batcher's clock). */
  readonly arrivalUs: number;
  /** Its queue policy's timeout, µs from its arrival (0: none). */
  readonly timeoutUs: number;
  /** Responses already sent (decoupled). */
  readonly responses: number;
  /** The crash it is re-run after: set once it was re-run (the one retry is spent). */
  readonly crash: InferError | undefined;
}

/** What the retry queue reads and keeps of a request of a crashed batch. */
export interface RetryEntry extends RetryCandidate {
  readonly request: InferRequest;
  state: 'queued' | 'retry' | 'running' | 'done';
  crash: InferError | undefined;
  /** Its queue policy's timeout: re-armed for what is left of it while it waits to be re-run. */
  timer?: { cancel(): void } | undefined;
}

export interface CrashRetriesDeps<E extends RetryEntry> {
  readonly model: string;
  readonly version: number;
  readonly clock: Clock;
  readonly stats: StatsRecorder;
  readonly log: Logger;
  /** Answers a request with the crash's error. */
  readonly fail: (entry: E, error: InferError) => void;
  /** A waiting request's queue policy timeout passed. */
  readonly expire: (entry: E) => void;
}

/** The requests of crashed batches waiting to be re-run alone, which the batcher serves before its queue. */
export class CrashRetries<E extends RetryEntry> {
  private readonly waiting: E[] = [];

  constructor(private readonly deps: CrashRetriesDeps<E>) {}

  get size(): number {
    return this.waiting.length;
  }

  /** The next request to re-run alone. */
  take(): E | undefined {
    return this.waiting.shift();
  }

  /** A waiting request was answered otherwise (cancelled, expired). */
  remove(entry: E): void {
    const i = this.waiting.indexOf(entry);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /**
   * The instance failed running `ran`: alone, the request is the cause and fails; of a batch, each
   * request that may be re-run waits here (state `retry`) and the others fail with the crash's
   * error. Returns how many now wait.
   */
  crashed(ran: readonly E[], error: InferError): number {
    const { model, version, clock, stats, log } = this.deps;
    if (ran.length === 1) {
      const e = ran[0]!;
      if (e.state === 'done') return 0;
      stats.poisonIsolated?.();
      log.warn(poisonMessage(model, version, e.request, e.crash !== undefined, error));
      this.deps.fail(e, error);
      return 0;
    }
    const now = clock.nowUs();
    let retried = 0;
    for (const e of ran) {
      if (e.state === 'done') continue;
      if (!mayRetryAfterCrash(e, now)) {
        this.deps.fail(e, error);
        continue;
      }
      retried++;
      e.state = 'retry';
      e.crash = error;
      if (e.timeoutUs > 0) e.timer = clock.setTimer(e.arrivalUs + e.timeoutUs - now, () => this.deps.expire(e));
      this.waiting.push(e);
      stats.crashRetried?.();
    }
    log.warn(crashedBatchMessage(model, version, ran.length, retried, error));
    return retried;
  }
}

/** Whether a request of a crashed batch of several may be re-run alone now. */
export function mayRetryAfterCrash(entry: RetryCandidate, nowUs: number): boolean {
  return entry.crash === undefined && entry.responses === 0 && (entry.timeoutUs === 0 || nowUs < entry.arrivalUs + entry.timeoutUs);
}

/** The log line of a crashed batch of `size` requests, `retried` of which are re-run alone. */
export function crashedBatchMessage(model: string, version: number, size: number, retried: number, error: InferError): string {
  const rest = size - retried;
  return (
    `model '${model}' version ${version}: a batch of ${size} requests crashed its instance (${error.message}); ` +
    `re-running ${retried} of them alone to find the cause${rest > 0 ? ` (${rest} not re-run: answered, cancelled, past their timeout or partly streamed)` : ''}`
  );
}

/** The log line of a request pinned as the cause of a crash. */
export function poisonMessage(model: string, version: number, request: InferRequest, retried: boolean, error: InferError): string {
  // The id is the client's text: quoted and bounded, so it cannot forge or flood log lines.
  const who = request.id ? `request ${JSON.stringify(request.id.slice(0, 128))}` : 'a request without an id';
  return (
    `model '${model}' version ${version}: ${who} crashed its instance running alone` +
    `${retried ? ' (re-run after its batch crashed)' : ''}; it fails alone as the cause: ${error.message}`
  );
}
