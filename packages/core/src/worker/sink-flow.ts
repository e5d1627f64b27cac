/**
 * Flow control of a decoupled model's responses across the worker boundary, one request's stream at
 * a time. The worker may have at most SINK_WINDOW_BYTES of a stream's responses sent and not yet
 * acknowledged; past that its sink holds the next ones in the worker (the model's own memory) and
 * their sends wait. The host acknowledges a response once its reader took it (the sink it handed the
 * response to returned nothing, or its promise resolved: see ResponseSink), so a client that stops
 * reading stops the model's sends, all the way from the transport to the model's sender.
 *
 * Both sides count a response as `responseBytes`; the host refuses a worker that sends past its
 * window (its code can post messages of its own), so what the server holds per stream is bounded
 * whatever the worker does.
 */
import { InferError } from '../errors.ts';
import type { InferResponse } from '../types.ts';

/** Bytes of one stream's responses a worker may have sent and not had acknowledged. */
export const SINK_WINDOW_BYTES = 4 * 1024 * 1024;
/** The host acknowledges in steps of at least this (one message per many small responses). */
export const SINK_ACK_BYTES = SINK_WINDOW_BYTES / 4;
/** Why a send fails once its request was cancelled (the response was not sent). */
export const SEND_CANCELLED_MESSAGE = 'Unable to send response: the request was cancelled.';
/** What a response counts beside its tensors' bytes (its objects), so a flood of empty ones is bounded too. */
export const RESPONSE_OVERHEAD_BYTES = 1024;

/** What a response counts against its stream's window. */
export function responseBytes(response: InferResponse): number {
  let bytes = RESPONSE_OVERHEAD_BYTES;
  for (const t of response.outputs) bytes += t.data.byteLength;
  return bytes;
}

/** The host's side: per request of an execute, bytes received and not acknowledged, and those its reader took. */
export class HostSinkFlow {
  private readonly held: Float64Array;
  private readonly taken: Float64Array;

  constructor(requests: number) {
    this.held = new Float64Array(requests);
    this.taken = new Float64Array(requests);
  }

  /** A response of `bytes` arrived for request `index`; false when its worker sent past the window. */
  received(index: number, bytes: number): boolean {
    if (this.held[index]! >= SINK_WINDOW_BYTES) return false;
    this.held[index]! += bytes;
    return true;
  }

  /** The reader of request `index` took `bytes`: the bytes to acknowledge now (0 while fewer than SINK_ACK_BYTES wait). */
  took(index: number, bytes: number): number {
    const taken = this.taken[index]! + bytes;
    if (taken < SINK_ACK_BYTES) {
      this.taken[index] = taken;
      return 0;
    }
    this.taken[index] = 0;
    this.held[index]! -= taken;
    return taken;
  }
}

interface Waiting {
  readonly response: InferResponse;
  readonly bytes: number;
  resolve(): void;
  reject(error: InferError): void;
}

/**
 * The worker's side of one request's stream: sends a response at once while fewer than
 * SINK_WINDOW_BYTES are unacknowledged, else holds it until acknowledgements make room. `response`
 * returns undefined when sent at once, or a promise that resolves once the response is sent and
 * rejects (CANCELLED) when the stream ends first; it is marked handled, so a sender that ignores it
 * never sees an unhandled rejection.
 */
export class WorkerSinkFlow {
  private unacked = 0;
  private readonly waiting: Waiting[] = [];
  private finish: (() => void) | undefined;
  private dropped: InferError | undefined;

  constructor(private readonly post: (response: InferResponse) => void) {}

  response(response: InferResponse): Promise<void> | undefined {
    if (this.dropped) return handled(Promise.reject(this.dropped));
    const bytes = responseBytes(response);
    if (this.waiting.length === 0 && this.unacked < SINK_WINDOW_BYTES) {
      this.unacked += bytes;
      this.post(response);
      return undefined;
    }
    return handled(new Promise<void>((resolve, reject) => this.waiting.push({ response, bytes, resolve, reject })));
  }

  /** The host acknowledged `bytes`: sends what now fits, then the completion if one waits for them. */
  acked(bytes: number): void {
    this.unacked = Math.max(0, this.unacked - bytes);
    while (this.waiting.length > 0 && this.unacked < SINK_WINDOW_BYTES) {
      const next = this.waiting.shift()!;
      this.unacked += next.bytes;
      this.post(next.response);
      next.resolve();
    }
    if (this.waiting.length === 0 && this.finish) {
      const finish = this.finish;
      this.finish = undefined;
      finish();
    }
  }

  /** Runs `finish` (the stream's completion) once every held response is sent: now, or after the acknowledgements. */
  whenSent(finish: () => void): void {
    if (this.waiting.length === 0) finish();
    else this.finish = finish;
  }

  /**
   * The request was cancelled: held responses are dropped, their sends (and any later one) fail with
   * `error`, and a completion waiting for them goes now.
   */
  drop(error: InferError): void {
    this.dropped = error;
    for (const w of this.waiting.splice(0)) w.reject(error);
    const finish = this.finish;
    this.finish = undefined;
    finish?.();
  }
}

/** Marks a promise's rejection handled (a sender may ignore it) and returns the promise itself. */
function handled(p: Promise<void>): Promise<void> {
  p.catch(() => undefined);
  return p;
}
