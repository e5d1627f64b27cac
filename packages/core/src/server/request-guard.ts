/**
 * A request is always answered by its own deadline and on cancellation, even when the execute it
 * is part of never returns (a hung `model.ts`): the request's `timeout` (Triton's `timeout`
 * parameter, µs) answers UNAVAILABLE `Request timeout expired` (Triton's words and code for an
 * expired request, HTTP 503) once it has passed since the server received it; aborting its signal
 * (client gone, gRPC cancel or deadline) answers CANCELLED. Either aborts the signal the scheduler
 * sees, so it drops the request from its queue or batch (and aborts an execution nobody waits for).
 *
 * Triton applies `timeout` only while the request is queued, and only with the queue policy's
 * `allow_timeout_override`; Tritium also bounds the wait for the answer with it. The queue policy
 * rules themselves are unchanged (the scheduler still sees `timeoutUs`).
 */
import { InferError } from '../errors.ts';
import type { Clock } from '../scheduler/scheduler.ts';
import { onAbort } from '../scheduler/abort-listeners.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';

export const REQUEST_TIMEOUT_MESSAGE = 'Request timeout expired';

/** The error an aborted signal answers with: its reason when that is an InferError, else CANCELLED. */
function abortError(signal: AbortSignal): InferError {
  return InferError.is(signal.reason) ? signal.reason : new InferError('CANCELLED', 'request cancelled');
}

interface Guard {
  /** The request as the scheduler should see it (its signal also fires on the deadline). */
  readonly request: InferRequest;
  /** Called once, first, when the request must be answered now (deadline or cancellation). */
  onAbort(fn: (error: InferError) => void): void;
  /** Stops the timer and listeners (the request was answered). */
  release(): void;
}

function guard(request: InferRequest, clock: Clock): Guard | undefined {
  const timeoutUs = request.timeoutUs ?? 0;
  const outer = request.signal;
  if (!(timeoutUs > 0) && !outer) return undefined;
  let signal = outer;
  let timer: { cancel(): void } | undefined;
  let unlink: (() => void) | undefined;
  if (timeoutUs > 0) {
    const controller = new AbortController();
    if (outer?.aborted) controller.abort(outer.reason);
    else if (outer) unlink = onAbort(outer, () => controller.abort(outer.reason));
    timer = clock.setTimer(timeoutUs, () => controller.abort(new InferError('UNAVAILABLE', REQUEST_TIMEOUT_MESSAGE)));
    signal = controller.signal;
  }
  let unlisten: (() => void) | undefined;
  return {
    request: signal === outer ? request : { ...request, signal },
    onAbort(fn) {
      if (signal!.aborted) {
        fn(abortError(signal!));
        return;
      }
      unlisten = onAbort(signal!, () => fn(abortError(signal!)));
    },
    release() {
      timer?.cancel();
      unlink?.();
      unlisten?.();
    },
  };
}

/**
 * Runs `enqueue` for `request` and settles with its answer, or with the deadline/cancellation
 * error as soon as that comes first. Requests with neither a timeout nor a signal pass straight.
 */
export function answerInTime(request: InferRequest, clock: Clock, enqueue: (r: InferRequest) => Promise<InferResponse>): Promise<InferResponse> {
  const g = guard(request, clock);
  if (!g) return enqueue(request);
  return new Promise<InferResponse>((resolve, reject) => {
    let done = false;
    const settle = (fn: () => void): void => {
      if (done) return;
      done = true;
      g.release();
      fn();
    };
    // Listening before the scheduler does: on abort this answer wins over the scheduler's own.
    g.onAbort((error) => settle(() => reject(error)));
    if (done) return;
    let pending: Promise<InferResponse>;
    try {
      pending = enqueue(g.request);
    } catch (error) {
      settle(() => reject(InferError.from(error)));
      return;
    }
    pending.then(
      (response) => settle(() => resolve(response)),
      (error: unknown) => settle(() => reject(InferError.from(error))),
    );
  });
}

/** The streaming form: `sink.complete(error)` on the deadline or cancellation; nothing after that. */
export function streamInTime(request: InferRequest, sink: ResponseSink, clock: Clock, enqueue: (r: InferRequest, s: ResponseSink) => void): void {
  const g = guard(request, clock);
  if (!g) {
    enqueue(request, sink);
    return;
  }
  let done = false;
  const complete = (error?: InferError): void => {
    if (done) return;
    done = true;
    g.release();
    sink.complete(error);
  };
  g.onAbort((error) => complete(error));
  if (done) return;
  enqueue(g.request, {
    response: (r) => (done ? undefined : sink.response(r)),
    complete: (error) => complete(error),
  });
}
