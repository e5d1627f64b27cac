/**
 * The ModelStreamInfer streams open now, so a stop can end each one itself: once the requests it
 * carries are answered, with status UNAVAILABLE `Server is stopping` (gRPC's "try elsewhere"). Left
 * to the listener's close, an open stream (a client's start_stream idling between requests) was cut
 * by the forced shutdown instead, and its client saw a reset or a CANCELLED it never asked for.
 */
export const STREAM_STOPPING_MESSAGE = 'Server is stopping';

export class StreamDrain {
  private draining = false;
  private readonly open = new Set<() => void>();

  /**
   * Registers an open stream's `stop` (ends it once its requests are answered), called once when the
   * drain begins, or at once for a stream opened after. Returns the stream's removal, for when it
   * ends by itself.
   */
  track(stop: () => void): () => void {
    if (this.draining) {
      stop();
      return () => undefined;
    }
    this.open.add(stop);
    return () => this.open.delete(stop);
  }

  /** The server is stopping: every open stream ends once it is idle. Idempotent. */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    const streams = [...this.open];
    this.open.clear();
    for (const stop of streams) stop();
  }
}
