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
import type { InferRequest } from '../types.ts';

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
