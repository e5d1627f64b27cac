import type { InferRequest } from '../types.ts';

/** The signal of executions nobody can cancel. */
const NEVER_ABORTED = new AbortController().signal;

/** What an execution reads of the requests it carries. */
interface ExecutedRequest {
  readonly request: InferRequest;
  readonly state: string;
}

/** An execution under way, and the signal that stops it once none of its requests waits any more. */
export class Execution<E extends ExecutedRequest> {
  readonly signal: AbortSignal;
  /**
   * Only an execution of several requests, one of them cancellable, gets a controller of its own:
   * with `ownSignal`, one of a single request runs under that request's own signal, which aborts
   * exactly then (creating an AbortSignal costs ~2 µs of main-thread CPU per execution).
   */
  private readonly controller: AbortController | undefined;

  constructor(
    readonly entries: readonly E[],
    ownSignal: boolean,
  ) {
    const only = ownSignal && entries.length === 1 ? entries[0]!.request.signal : undefined;
    this.controller = !only && entries.some((e) => e.request.signal) ? new AbortController() : undefined;
    this.signal = only ?? this.controller?.signal ?? NEVER_ABORTED;
  }

  /** A request of it was answered before it ended (cancelled, expired): aborts it once none waits. */
  answeredEarly(): void {
    if (this.entries.every((e) => e.state === 'done')) this.controller?.abort();
  }
}
