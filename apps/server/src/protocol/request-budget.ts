/**
 * A server-wide bound on the request bytes both transports hold at once (`--max-buffered-request-size`).
 * Each request is bounded on its own (`--http-max-input-size`, `--grpc-max-input-size`), but not
 * their sum: a gzip body of 64 KB decompresses to 64 MB, so a thousand such requests at once asked
 * for 64 GB, and a bare `Content-Length: 67108864` header (no body sent) reserved 64 MB per
 * connection. HTTP bodies and gRPC messages are charged here as their bytes arrive and as they
 * inflate, before they are held; past the bound a request is refused (HTTP 503, gRPC
 * RESOURCE_EXHAUSTED) instead of the server running out of memory.
 */
import os from 'node:os';
import { TransportError } from './status.ts';

/** A quarter of the memory this process may use (its cgroup limit when lower than the machine's). */
export function defaultMaxBufferedRequestBytes(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const memory = constrained > 0 && constrained < os.totalmem() ? constrained : os.totalmem();
  return Math.floor(memory / 4);
}

export class RequestBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes held now, by every request together. */
  get inUse(): number {
    return this.used;
  }

  /** One request's share; give it back with `release()` once the request is done. */
  account(): RequestAccount {
    return new RequestAccount(this);
  }

  /** The refusal a request gets when its bytes do not fit (HTTP 503, gRPC RESOURCE_EXHAUSTED). */
  exhausted(): TransportError {
    return new TransportError(
      `requests held in memory would exceed the server's limit of ${this.limit} bytes (--max-buffered-request-size); retry later`,
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

export class RequestAccount {
  private heldBytes = 0;
  private released = false;

  constructor(private readonly budget: RequestBudget) {}

  /** Bytes this request holds now. */
  get held(): number {
    return this.heldBytes;
  }

  /**
   * Takes `bytes` more, or throws naming the limit (nothing taken then). After `release()` nothing
   * more is taken: bytes still arriving for a request that has ended are refused.
   */
  take(bytes: number): void {
    if (this.released) throw this.budget.exhausted();
    this.budget.take(bytes);
    this.heldBytes += bytes;
  }

  /** Gives back `bytes` of what this account holds (a reservation larger than what arrived). */
  give(bytes: number): void {
    const n = Math.min(bytes, this.heldBytes);
    this.budget.give(n);
    this.heldBytes -= n;
  }

  /** Gives back everything and takes nothing more; safe to call more than once. */
  release(): void {
    this.released = true;
    this.give(this.heldBytes);
  }
}
