/**
 * Server-sent events as OpenAI streams them: one `data: <json>\n\n` per chunk, `data: [DONE]\n\n` at
 * the end, and on a failure after the stream began, `data: {"error": {...}}\n\n` (what OpenAI's
 * clients raise as an APIError) and the end of the stream, without [DONE].
 */
import type { ServerResponse } from 'node:http';
import { openAiErrorReply } from './errors.ts';

export class SseWriter {
  private opened = false;

  constructor(private readonly res: ServerResponse) {}

  /** False once the client has gone (its connection closed): nothing more is written. */
  get open(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  /** Writes one chunk (the head first, on the first one). */
  event(json: unknown): void {
    if (!this.open) return;
    this.head();
    this.res.write(`data: ${JSON.stringify(json)}\n\n`);
  }

  /** The stream ended well: `[DONE]`. */
  done(): void {
    if (!this.open) return;
    this.head();
    this.res.end('data: [DONE]\n\n');
  }

  /** The stream failed after it began: the error as OpenAI's clients read it, then the end. */
  fail(error: unknown): void {
    if (!this.open) return;
    this.head();
    this.res.end(`data: ${JSON.stringify(openAiErrorReply(error).body)}\n\n`);
  }

  /** Whether anything was written (before that, a failure can still be an ordinary error reply). */
  get started(): boolean {
    return this.opened;
  }

  private head(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  }
}
