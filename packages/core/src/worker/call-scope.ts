/**
 * A cancellation scope whose AbortSignal is made only when someone asks for it: the BLS calls one
 * execute makes (aborted with the execute's own signal, and once it ends: orphans are not kept
 * running), and, inside the worker, each execute's own signal. Most executes make no call and never
 * read their signal, while an AbortSignal costs about 5 µs to create; and a scope is aborted with
 * one shared reason by default, because `abort()` without a reason builds a DOMException (a stack
 * trace) every time, which cost the main thread more than the rest of an execute's bookkeeping.
 */
import { InferError } from '../errors.ts';

/** Why a BLS call was aborted: the execute that made it was cancelled or ended. */
export const EXECUTE_ENDED = new InferError('CANCELLED', 'the execute that made this BLS call was cancelled or ended');

export class CallScope {
  private controller: AbortController | undefined;
  /** Set once aborted: the reason the signal carries, whenever it is made. */
  private reason: unknown;
  private ended = false;

  constructor(private readonly defaultReason: unknown = EXECUTE_ENDED) {}

  /** The scope's signal (made on first use; already aborted, with the scope's reason, if the scope ended). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.ended) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Whether the scope was aborted (without making its signal). */
  get aborted(): boolean {
    return this.ended;
  }

  /** Cancels the calls made so far and any made later. Idempotent: the first reason stays. */
  abort(reason: unknown = this.defaultReason): void {
    if (this.ended) return;
    this.ended = true;
    this.reason = reason;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(reason);
  }
}
