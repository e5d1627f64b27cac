/**
 * Server-sent events as OpenAI streams them: one `data: <json>\n\n` per chunk, `data: [DONE]\n\n` at
 * the end, and on a failure after the stream began, `data: {"error": {...}}\n\n` (what OpenAI's
 * clients raise as an APIError) and the end of the stream, without [DONE].
 *
 * Bounded as generate_stream is (protocol/stream-queue.ts): past `--stream-max-queued-size` bytes
 * the client has not read, `event` returns a promise the model's sends wait on; a client that stays
 * that far behind for `--stream-stall-timeout-secs` gets the error event and its connection is
 * closed, which cancels the request.
 */
import type { ServerResponse } from 'node:http';
import { StreamQueue, type StreamLimits } from '../protocol/stream-queue.ts';
import { openAiErrorReply } from './errors.ts';

export class SseWriter {
  private opened = false;
  private readonly queue: StreamQueue;

  constructor(
    private readonly res: ServerResponse,
    limits: StreamLimits,
  ) {
    this.queue = new StreamQueue(limits, (error) => {
      this.res.write(this.errorEvent(error));
      this.res.destroy();
    });
    res.once('close', () => this.queue.close());
  }

  /** False once the client has gone (its connection closed) or the stream ended: nothing more is written. */
  get open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  /** Whether anything was written (before that, a failure can still be an ordinary error reply). */
  get started(): boolean {
    return this.opened;
  }

  /** Writes one chunk (the head first, on the first one); a promise while the client is behind. */
  event(json: unknown): Promise<void> | undefined {
    if (!this.open) return undefined;
    this.head();
    const text = `data: ${JSON.stringify(json)}\n\n`;
    const bytes = Buffer.byteLength(text);
    this.res.write(text, () => this.queue.sent(bytes));
    return this.queue.wrote(bytes);
  }

  /** The stream ended well: `[DONE]`. */
  done(): void {
    this.end('data: [DONE]\n\n');
  }

  /** The stream failed after it began: the error as OpenAI's clients read it, then the end. */
  fail(error: unknown): void {
    this.end(this.errorEvent(error));
  }

  private end(text: string): void {
    this.queue.close();
    if (!this.open) return;
    this.head();
    this.res.end(text);
  }

  private errorEvent(error: unknown): string {
    return `data: ${JSON.stringify(openAiErrorReply(error).body)}\n\n`;
  }

  private head(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  }
}
