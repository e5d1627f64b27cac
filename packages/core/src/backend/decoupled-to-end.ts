import type { InferError } from '../errors.ts';
import type { InferRequest, ResponseSink } from '../types.ts';
import type { ExecuteContext, ExecuteTimings, ModelInstance } from './spi.ts';

/**
 * Runs one decoupled execution to its end: resolves once the call has returned AND every request has
 * completed (its final flag, or an error). A decoupled instance's `executeDecoupled` resolves when
 * its call returns, and, as in Triton, a model may send responses after that (from a timer, a
 * stream): callers that need every response (warmup, `tritium model run`) wait here, not on the call.
 */
export async function executeDecoupledToEnd(
  instance: ModelInstance,
  batch: readonly InferRequest[],
  sinks: readonly ResponseSink[],
  signal: AbortSignal,
  context?: ExecuteContext,
): Promise<ExecuteTimings | void> {
  if (!instance.executeDecoupled) throw new Error('executeDecoupledToEnd: the instance has no executeDecoupled');
  let open = sinks.length;
  let allDone!: () => void;
  const finished = new Promise<void>((resolve) => (allDone = resolve));
  if (open === 0) allDone();
  const counted = sinks.map(
    (sink): ResponseSink => {
      let done = false;
      return {
        response: (r) => sink.response(r),
        complete: (error?: InferError) => {
          if (done) return;
          done = true;
          sink.complete(error);
          if (--open === 0) allDone();
        },
      };
    },
  );
  const timings = await instance.executeDecoupled(batch, counted, signal, context);
  await finished;
  return timings;
}
