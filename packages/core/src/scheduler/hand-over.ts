import { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { InferResponse } from '../types.ts';

/** Outcome of a request: a response, an error, or null for a stream completed without error. */
export type Outcome = InferResponse | InferError | null;

/** Hands a request's outcome to its caller (resolves a unary call, or ends a stream). */
export type Deliver = (outcome: Outcome) => void;

/** What handing over reads and keeps of a request. */
export interface HandedOver {
  readonly deliver: Deliver;
  /** preserve_ordering: its outcome is known (it may still wait for earlier requests). */
  settled?: boolean;
  /** Its outcome was handed to the caller. */
  delivered?: boolean;
  /** preserve_ordering: its outcome, waiting for earlier requests. */
  held?: Outcome;
}

/**
 * Hands answered requests' outcomes to their callers: at once, or with `preserve_ordering` in
 * arrival order (a cancellation at once, as Triton answers it). A throwing callback is logged and
 * never reaches the batcher.
 */
export class HandOver<E extends HandedOver> {
  /** preserve_ordering: accepted requests in arrival order, from `head` on not yet handed over. */
  private readonly order: E[] = [];
  private head = 0;

  constructor(
    private readonly model: string,
    private readonly log: Logger,
    private readonly ordered: boolean,
  ) {}

  /** A request was accepted (its place in the order). */
  accepted(entry: E): void {
    if (this.ordered) this.order.push(entry);
  }

  /** `entry` was answered with `outcome`: hands it over now, or once every earlier request's was. */
  answered(entry: E, outcome: Outcome, cancelled: boolean): void {
    entry.settled = true;
    if (this.ordered && !cancelled) {
      entry.held = outcome;
      this.flush();
    } else {
      this.deliver(entry, outcome);
      if (this.ordered) this.flush();
    }
  }

  /** Releases held outcomes in arrival order. Cancelled ones were released at once. */
  private flush(): void {
    while (this.head < this.order.length) {
      const e = this.order[this.head]!;
      if (!e.settled) break;
      this.head++;
      if (!e.delivered) this.deliver(e, e.held as Outcome);
      e.held = undefined;
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    } else if (this.head === this.order.length) {
      this.order.length = 0;
      this.head = 0;
    }
  }

  private deliver(entry: E, outcome: Outcome): void {
    if (entry.delivered) return;
    entry.delivered = true;
    try {
      entry.deliver(outcome);
    } catch (err) {
      this.log.error(`model '${this.model}': response callback threw: ${InferError.from(err).message}`);
    }
  }
}
