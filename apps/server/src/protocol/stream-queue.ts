/**
 * What a streaming client (gRPC ModelStreamInfer, HTTP generate_stream) has not read yet: the bytes
 * written to its stream whose write has not completed (Node and grpc-js keep them in memory while
 * the client's TCP or HTTP/2 window is full). Past `--stream-max-queued-size` the stream pushes back:
 * `wrote` returns a promise the response's producer waits on (a decoupled model's sender waits, see
 * ResponseSink), and a stream that stays at its bound for `--stream-stall-timeout-secs` ends with an
 * error naming the bound (nginx's send_timeout: 60 s between two writes the client took).
 */
import { TransportError } from './status.ts';

export interface StreamLimits {
  /** `--stream-max-queued-size`: bytes written to one stream and not yet taken by its client, at most. */
  readonly maxQueuedBytes: number;
  /** `--stream-stall-timeout-secs` (ms): how long a stream may stay at that bound before it ends. */
  readonly stallTimeoutMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxQueuedBytes: 4 * 1024 * 1024,
  stallTimeoutMs: 60_000,
};

/** The error a stream ends with when its client did not read for the stall timeout (gRPC RESOURCE_EXHAUSTED). */
export function streamStalledError(limits: StreamLimits, queued: number): TransportError {
  return new TransportError(
    `the client did not read this stream's responses: ${queued} bytes queued for it, at least the bound of ${limits.maxQueuedBytes} (--stream-max-queued-size), for ${limits.stallTimeoutMs / 1000} s (--stream-stall-timeout-secs)`,
    503,
  );
}

export class StreamQueue {
  private queued = 0;
  private waiters: (() => void)[] = [];
  private stallTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** `onStall`: the stream stayed at its bound past the stall timeout; end it with `error`. */
  constructor(
    private readonly limits: StreamLimits,
    private readonly onStall: (error: TransportError) => void,
  ) {}

  /** True while the stream holds its bound or more (its reader should stop taking requests). */
  get full(): boolean {
    return this.queued >= this.limits.maxQueuedBytes;
  }

  /**
   * `bytes` were written to the stream (call `sent(bytes)` from the write's callback). Returns a
   * promise when the stream is now at its bound: it resolves once the client has read below it,
   * or the stream closed. It never rejects.
   */
  wrote(bytes: number): Promise<void> | undefined {
    if (this.closed) return undefined;
    this.queued += bytes;
    if (!this.full) return undefined;
    this.stallTimer ??= setTimeout(() => this.stalled(), this.limits.stallTimeoutMs);
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** A write of `bytes` completed: the client's connection took it. */
  sent(bytes: number): void {
    this.queued -= bytes;
    if (this.full || this.closed) return;
    this.resume();
  }

  /** The stream is gone (ended, cancelled, reset): every waiting producer goes on, nothing is counted any more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.resume();
  }

  private resume(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private stalled(): void {
    this.stallTimer = undefined;
    if (this.closed || !this.full) return;
    const error = streamStalledError(this.limits, this.queued);
    this.close();
    this.onStall(error);
  }
}
