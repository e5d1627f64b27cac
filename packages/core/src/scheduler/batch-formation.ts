/**
 * Triton's batch formation (GetDynamicBatch, docs/triton-compatibility.md §3) as a pure function over the
 * queue: which queued requests to send now, or how long to wait for more. Tritium's change: without
 * `preserve_ordering` a request whose shape key differs from the head's is skipped (it heads a
 * later batch) instead of ending the batch.
 */
import type { BatcherOptions } from './batcher-options.ts';
import type { QueueItem, RequestQueue } from './request-queue.ts';

/** Entries scanned per formation when skipping mismatched shapes (bounds the work per batch). */
const SCAN_LIMIT = 4096;

/** What formation reads of a queued request. */
export interface Candidate extends QueueItem {
  readonly batchSize: number;
  readonly key: string;
  readonly arrivalUs: number;
  /** Already batched upstream (InferRequest.preformed): its queue delay counts as spent. */
  readonly preformed?: boolean;
}

export interface FormationRules {
  readonly batching: boolean;
  readonly maxBatchSize: number;
  readonly maxPreferred: number;
  readonly preferred: ReadonlySet<number>;
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
}

export function formationRules(o: BatcherOptions): FormationRules {
  return {
    batching: o.batching,
    maxBatchSize: o.maxBatchSize,
    maxPreferred: o.preferredBatchSizes.length > 0 ? Math.max(...o.preferredBatchSizes) : Math.max(1, o.maxBatchSize),
    preferred: new Set(o.preferredBatchSizes),
    maxQueueDelayUs: o.maxQueueDelayUs,
    preserveOrdering: o.preserveOrdering,
  };
}

/**
 * Scans the queue in service order. Returns the entries to send with `waitUs` 0, or the pending
 * entries with `waitUs` > 0: the time until the oldest one's max queue delay runs out.
 * The queue must not be empty.
 */
export function formBatch<T extends Candidate>(queue: RequestQueue<T>, r: FormationRules, now: number): { entries: T[]; waitUs: number } {
  const entries: T[] = [];
  if (!r.batching) {
    queue.scan((e) => (entries.push(e), false));
    return { entries, waitUs: 0 };
  }
  let size = 0;
  let best = 0; // entry count of the best candidate batch (0 = none yet)
  let sendNow = false;
  let scanned = 0;
  let headKey = '';
  queue.scan((e) => {
    if (++scanned > SCAN_LIMIT) return false;
    if (entries.length === 0) {
      headKey = e.key;
    } else if (e.key !== headKey) {
      if (r.preserveOrdering) {
        sendNow = true; // Triton: a different shape ends the batch
        return false;
      }
      return true; // skipped: it heads a later batch
    }
    const next = size + e.batchSize;
    // Going past the largest preferred size: what is pending so far is the candidate.
    if (best === 0 && next > r.maxPreferred && entries.length > 0) best = entries.length;
    if (next > r.maxBatchSize) {
      sendNow = true;
      return false;
    }
    entries.push(e);
    size = next;
    if (r.preferred.has(size)) best = entries.length;
    return true;
  });
  const delayUs = now - entries[0]!.arrivalUs;
  const exceeded = r.maxQueueDelayUs !== 0 && (delayUs >= r.maxQueueDelayUs || entries[0]!.preformed === true);
  // A preferred size found (also with no delay configured): send exactly that many.
  if (best > 0 && !exceeded) return { entries: entries.slice(0, best), waitUs: 0 };
  if (sendNow || size >= r.maxPreferred || exceeded || r.maxQueueDelayUs === 0) return { entries, waitUs: 0 };
  return { entries, waitUs: r.maxQueueDelayUs - delayUs };
}
