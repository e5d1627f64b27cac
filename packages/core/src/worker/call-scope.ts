/**
 * The cancellation scope of the BLS calls one execute makes: they are aborted with the execute's own
 * signal, and once it ends (orphans are not kept running). Most executes make no call, so the
 * AbortController is made only when one asks for the signal; and it is aborted with one shared
 * reason, because `abort()` without a reason builds a DOMException (a stack trace) every time, which
 * cost the main thread more than the rest of an execute's bookkeeping.
 */
import { InferError } from '../errors.ts';

/** Why a BLS call was aborted: the execute that made it was cancelled or ended. */
export const EXECUTE_ENDED = new InferError('CANCELLED', 'the execute that made this BLS call was cancelled or ended');

export class CallScope {
  private controller: AbortController | undefined;
  private ended = false;

  /** The signal the execute's BLS calls carry (made on first use; already aborted if the execute ended). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(EXECUTE_ENDED);
    }
    return this.controller.signal;
  }

  /** Cancels the calls made so far and any made later. Idempotent. */
  abort(): void {
    this.ended = true;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(EXECUTE_ENDED);
  }
}
