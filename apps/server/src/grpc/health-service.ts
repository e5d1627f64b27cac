/**
 * `grpc.health.v1.Health`. Check is Triton's: the server's readiness, whatever service is named.
 * Watch is gRPC's health protocol with the same answer: the status at once, then each change, until
 * the client cancels or the server stops (NOT_SERVING, then the stream ends UNAVAILABLE `Server is
 * stopping`, so the watcher looks elsewhere). Readiness has no change event: one timer reads it
 * every WATCH_POLL_MS while any Watch is open, and only a change is written. The Watch streams open
 * at once are bounded by `--grpc-health-max-watches`; one past it ends RESOURCE_EXHAUSTED.
 */
import { status as GrpcStatus, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import type { HealthCheckRequest, HealthCheckResponseInit } from '@tritium/client/proto';
import { DecodeFailure } from './service-definition.ts';
import { STREAM_STOPPING_MESSAGE, type StreamDrain } from './stream-drain.ts';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';

type HealthRequest = HealthCheckRequest | DecodeFailure;
type HealthResponse = HealthCheckResponseInit;

/** How often an open Watch reads readiness. */
export const WATCH_POLL_MS = 250;

interface Watcher {
  readonly call: ServerWritableStream<HealthRequest, HealthResponse>;
  last: ServingStatus;
  untrack: () => void;
}

export class HealthService {
  private readonly watchers = new Set<Watcher>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly status: () => ServingStatus,
    private readonly maxWatches: number,
    private readonly drain: StreamDrain,
  ) {}

  /** Watches open now. */
  get watching(): number {
    return this.watchers.size;
  }

  check(call: ServerUnaryCall<HealthRequest, HealthResponse>, callback: sendUnaryData<HealthResponse>): void {
    if (call.request instanceof DecodeFailure) {
      callback({ code: GrpcStatus.INVALID_ARGUMENT, details: call.request.message });
      return;
    }
    callback(null, { status: this.status() });
  }

  watch(call: ServerWritableStream<HealthRequest, HealthResponse>): void {
    if (call.request instanceof DecodeFailure) {
      call.emit('error', { code: GrpcStatus.INVALID_ARGUMENT, details: call.request.message });
      return;
    }
    if (this.watchers.size >= this.maxWatches) {
      call.emit('error', {
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: `too many health Watch streams open: at most ${this.maxWatches} (--grpc-health-max-watches)`,
      });
      return;
    }
    const watcher: Watcher = { call, last: this.status(), untrack: () => undefined };
    call.write({ status: watcher.last });
    this.watchers.add(watcher);
    call.on('cancelled', () => this.remove(watcher));
    call.on('error', () => this.remove(watcher));
    watcher.untrack = this.drain.track(() => this.stop(watcher));
    this.timer ??= setInterval(() => this.poll(), WATCH_POLL_MS);
    this.timer.unref();
  }

  private poll(): void {
    const now = this.status();
    for (const w of this.watchers) {
      if (w.last === now) continue;
      w.last = now;
      w.call.write({ status: now });
    }
  }

  /** The server is stopping: the watcher reads NOT_SERVING, then its stream ends. */
  private stop(w: Watcher): void {
    if (!this.watchers.has(w)) return;
    this.remove(w);
    const end = (): void => void w.call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: STREAM_STOPPING_MESSAGE });
    // The status ends the stream once NOT_SERVING is written out, not beside it in the same turn.
    if (w.last !== 'NOT_SERVING') w.call.write({ status: 'NOT_SERVING' }, end);
    else end();
  }

  private remove(w: Watcher): void {
    if (!this.watchers.delete(w)) return;
    w.untrack();
    if (this.watchers.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
