/**
 * A server-wide bound on the request body bytes the HTTP transport holds at once
 * (`--http-max-buffered-body-size`). Each body is bounded by `--http-max-input-size`, but not their
 * sum: a gzip body of 64 KB decompresses to 64 MB, so a thousand such requests at once asked for
 * 64 GB, and a bare `Content-Length: 67108864` header (no body sent) reserved 64 MB per connection.
 * Past the bound a request is refused 503 (retry later) instead of the server running out of memory.
 */
import os from 'node:os';
import { TransportError } from '../protocol/status.ts';

/** A quarter of the memory this process may use (its cgroup limit when lower than the machine's). */
export function defaultMaxBufferedBodyBytes(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const memory = constrained > 0 && constrained < os.totalmem() ? constrained : os.totalmem();
  return Math.floor(memory / 4);
}

export class BodyBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes held now, by every request together. */
  get inUse(): number {
    return this.used;
  }

  /** One request's share; give it back with `release()` once the response is done. */
  account(): BodyAccount {
    return new BodyAccount(this);
  }

  /** The 503 a request gets when its bytes do not fit. */
  exhausted(): TransportError {
    return new TransportError(
      `request bodies held in memory would exceed the server's limit of ${this.limit} bytes (--http-max-buffered-body-size); retry later`,
      503,
    );
  }

  /** @internal */ take(bytes: number): void {
    if (this.used + bytes > this.limit) throw this.exhausted();
    this.used += bytes;
  }

  /** @internal */ give(bytes: number): void {
    this.used -= bytes;
  }
}

export class BodyAccount {
  private held = 0;

  constructor(private readonly budget: BodyBudget) {}

  /** Takes `bytes` more, or throws 503 naming the limit (nothing taken then). */
  take(bytes: number): void {
    this.budget.take(bytes);
    this.held += bytes;
  }

  /** Gives back `bytes` of what this account holds (a reservation larger than what arrived). */
  give(bytes: number): void {
    const n = Math.min(bytes, this.held);
    this.budget.give(n);
    this.held -= n;
  }

  /** Gives back everything; safe to call more than once. */
  release(): void {
    this.give(this.held);
  }
}
