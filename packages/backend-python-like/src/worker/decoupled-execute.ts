/**
 * Runs INSIDE an instance's worker: a decoupled model's execute, each request with a response
 * sender that streams into its sink, and the same execute answering one response per request.
 */
import { InferError, type InferRequest, type InferResponse, type ResponseSink } from '@tritium/core';
import type { ExecuteResult } from '@tritium/core/backend';
import { SEND_CANCELLED_MESSAGE, type WorkerExecuteContext } from '@tritium/core/worker';
import * as api from '../model-api/runtime-face.ts';
import type { InferenceResponse as AuthorResponse } from '../model-api/response.ts';
import { answerOne } from './map-results.ts';
import { hookError, plainResponse, type RunningModel } from './running-model.ts';

/** Why a send fails once its request has ended: cancelled (the client left), or closed by an error. */
function endedError(cancelled: boolean): InferError {
  return cancelled
    ? new InferError('CANCELLED', SEND_CANCELLED_MESSAGE)
    : new InferError('INTERNAL', 'Unable to send response: the request has already ended.');
}

/**
 * What `send()` returns: resolves once the response is on its way to the client (at once, unless
 * the client reads slower than the model sends); rejects with a TritonError when the request ended
 * first. Marked handled, so a model that does not await its sends never sees an unhandled rejection.
 */
function authorPromise(sent: Promise<void> | void): Promise<void> {
  if (!sent) return Promise.resolve();
  const p = sent.then(undefined, (e: unknown) => {
    const error = InferError.from(e);
    throw new api.TritonError(error.message, error.code);
  });
  p.catch(() => undefined);
  return p;
}

/** The requests of one decoupled execute, each open until its final flag, an error or its cancellation. */
class OpenRequests {
  private open: number;
  private readonly closed: boolean[];
  private allDone!: () => void;
  /** Resolves once every request is closed. */
  readonly finished = new Promise<void>((resolve) => (this.allDone = resolve));

  constructor(private readonly sinks: readonly ResponseSink[]) {
    this.open = sinks.length;
    this.closed = sinks.map(() => false);
    if (this.open === 0) this.allDone();
  }

  get anyOpen(): boolean {
    return this.open > 0;
  }

  isClosed(i: number): boolean {
    return this.closed[i]!;
  }

  close(i: number, error?: InferError): void {
    if (this.closed[i]) return;
    this.closed[i] = true;
    this.sinks[i]!.complete(error);
    if (--this.open === 0) this.allDone();
  }
}

/** The response sender of request `i`: each response checked and sent into its sink, the final flag closing it. */
function responseSender(run: RunningModel, wire: InferRequest, i: number, requests: OpenRequests, sink: ResponseSink, xctx: WorkerExecuteContext) {
  const { config, version } = run.init;
  let finalSent = false;
  return {
    send(response?: AuthorResponse | null, flags = 0): Promise<void> {
      if (finalSent) {
        throw new api.TritonError('Unable to send response. Response sender has been closed.', api.TritonError.INTERNAL);
      }
      let sent: Promise<void> | void = undefined;
      if (response !== undefined && response !== null) {
        if (requests.isClosed(i)) sent = Promise.reject(endedError(xctx.signal.aborted));
        else {
          const result = answerOne(plainResponse(response, 0, run.init.modelName), wire, run.requestedOf(wire), { config, version }, true);
          if (InferError.is(result)) requests.close(i, result);
          else sent = sink.response(result);
        }
      }
      if (flags & api.TRITONSERVER_RESPONSE_COMPLETE_FINAL) {
        finalSent = true;
        requests.close(i);
      }
      return authorPromise(sent);
    },
    isCancelled: () => xctx.signal.aborted,
  };
}

/**
 * Runs the model's execute with a response sender per request. As in Triton, the instance is free
 * again once execute returns: a model may keep sending from a timer or a stream it started, and
 * the next batch runs meanwhile (a decoupled model that streams for seconds would otherwise serve
 * one batch at a time). `untilFinal` waits for every final flag instead (a call that collects
 * every response before it answers).
 */
export async function executeDecoupled(
  run: RunningModel,
  batch: readonly InferRequest[],
  sinks: readonly ResponseSink[],
  xctx: WorkerExecuteContext,
  untilFinal = false,
): Promise<void> {
  const open = new OpenRequests(sinks);
  const requests = batch.map((wire, i) => {
    const sender = responseSender(run, wire, i, open, sinks[i]!, xctx);
    return api.incomingRequest({ wire, requestedOutputNames: run.requestedOf(wire), sender: () => sender, isCancelled: () => xctx.signal.aborted });
  });
  let failure: InferError | undefined;
  try {
    const returned = await run.model.execute(requests);
    if (returned !== undefined && returned !== null) {
      failure = new InferError(
        'INTERNAL',
        `Python model '${run.init.modelName}' is using the decoupled mode and the execute function must return None.`,
      );
    }
  } catch (error) {
    failure = hookError(error, run.failPrefix, run.init);
  }
  if (failure) batch.forEach((_, i) => open.close(i, failure));
  if (!open.anyOpen) return;
  // A request cancelled before its final flag ends here, whether or not the model ever sends the
  // flag (its sender then drops what it sends). The execute's signal outlives the call while any
  // of its requests is open (the worker runtime keeps it for executes that returned open).
  const endCancelled = (): void => batch.forEach((_, i) => open.close(i, new InferError('CANCELLED', 'request cancelled')));
  if (xctx.signal.aborted) endCancelled();
  else xctx.signal.addEventListener('abort', endCancelled, { once: true });
  if (untilFinal) await open.finished;
}

/** A decoupled model asked for one response per request (a non-streaming call): exactly one response each. */
export async function executeDecoupledAsOne(run: RunningModel, batch: readonly InferRequest[], xctx: WorkerExecuteContext): Promise<ExecuteResult[]> {
  const collected = batch.map(() => ({ responses: [] as InferResponse[], error: undefined as InferError | undefined }));
  await executeDecoupled(
    run,
    batch,
    collected.map((c) => ({ response: (r: InferResponse) => void c.responses.push(r), complete: (e?: InferError) => void (c.error = e) })),
    xctx,
    true,
  );
  return collected.map(
    (c) =>
      c.error ??
      (c.responses.length === 1
        ? c.responses[0]!
        : new InferError(
            'INVALID_ARG',
            `model '${run.init.modelName}' is decoupled and sent ${c.responses.length} responses to a request that takes one; use a streaming request (ModelStreamInfer)`,
          )),
  );
}
