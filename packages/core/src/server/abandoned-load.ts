/**
 * A stop abandons the model loads still running: their versions would be unloaded as soon as they
 * were ready, and the exit timeout (Triton's --exit-timeout-secs) belongs to the requests in flight,
 * not to starting models. A load step raced against the server's stop signal gives up at once; what
 * it produces later is released, so a backend that cannot stop (an ONNX session created in native
 * code, a model.ts initialize that never returns) leaves nothing running behind the stop.
 */
import { InferError } from '../errors.ts';

/** The error a load abandoned by a stop fails with (`failed to load 'm' version 1: Unavailable: ...`). */
export function loadAbandoned(): InferError {
  return new InferError('UNAVAILABLE', 'Server is stopping: the load was abandoned');
}

/**
 * `work`, unless `signal` aborts first: then rejects with {@link loadAbandoned} at once, and hands
 * whatever `work` resolves with later to `release` (its errors are swallowed: the load already failed).
 */
export function unlessAbandoned<T>(work: Promise<T>, signal: AbortSignal | undefined, release: (value: T) => unknown): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    let abandoned = false;
    const onAbort = (): void => {
      abandoned = true;
      reject(loadAbandoned());
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!abandoned) resolve(value);
        else void Promise.resolve().then(() => release(value)).catch(() => undefined);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
