/**
 * Adaptive batching (`parameters { key: "tritium.batching" value: { string_value: "adaptive" } }`,
 * beyond Triton): the dynamic batcher waits out `max_queue_delay_microseconds` for a fuller batch only
 * while waiting is observed to pay off. Triton always waits the delay when no preferred size is
 * reached, so a lone client (or any closed loop whose next request needs this one's answer) pays the
 * whole delay on every request for a batch that never grows.
 *
 * What it observes: how many requests arrive *while the batcher waits* per microsecond of waiting
 * (an exponentially weighted average over wait windows). At a decision to wait `remainingUs` more, the
 * expected arrivals are rate × remainingUs; below one, the batch is sent now. Every `PROBE_EVERY`th
 * decision (and the first) waits anyway, so a rising load is noticed: a probe waits `PROBE_FRACTION`
 * of the remaining delay and goes on to the whole delay only if a request arrived meanwhile (a lone
 * client then pays an eighth of the delay once in 32 requests, not the whole delay). A window's
 * sample is its arrivals over its length, short or whole alike, so the estimate stays unbiased.
 * It only ever shortens a wait: no request waits past the configured maximum, and formation order
 * (priority, FIFO, shapes) is the fixed-delay batcher's, so nothing is starved.
 */

/** Weight of the newest wait window in the arrival-rate average. */
const ALPHA = 0.25;
/** One decision in this many waits regardless of the estimate (a probe of the current load). */
export const PROBE_EVERY = 32;
/** The share of the remaining delay a probe waits before it needs an arrival to go on. */
export const PROBE_FRACTION = 1 / 8;

export class AdaptiveDelay {
  /** Arrivals per microsecond while waiting (EWMA); undefined before the first window. */
  private rate: number | undefined;
  private waitStartUs: number | undefined;
  private arrivalsInWait = 0;
  private decisions = 0;

  /** When the probe under way ends unless a request arrives first; undefined when no probe is under way. */
  private probeEndUs: number | undefined;

  /**
   * How long to wait (at most `remainingUs`) for a fuller batch before deciding again; 0 = send what
   * is pending now.
   */
  waitUs(nowUs: number, remainingUs: number): number {
    if (this.waitStartUs !== undefined) {
      // A wait under way runs its course (or fills); a probe only while it has seen an arrival.
      if (this.probeEndUs === undefined || this.arrivalsInWait > 0) return remainingUs;
      return Math.min(remainingUs, Math.max(0, this.probeEndUs - nowUs));
    }
    const probe = this.rate === undefined || ++this.decisions % PROBE_EVERY === 0;
    if (!probe && this.rate! * remainingUs < 1) return 0;
    this.waitStartUs = nowUs;
    this.arrivalsInWait = 0;
    if (!probe) {
      this.probeEndUs = undefined;
      return remainingUs;
    }
    const probeUs = Math.max(1, Math.ceil(remainingUs * PROBE_FRACTION));
    this.probeEndUs = nowUs + probeUs;
    return Math.min(remainingUs, probeUs);
  }

  /** A request was queued. */
  arrived(): void {
    if (this.waitStartUs !== undefined) this.arrivalsInWait++;
  }

  /** A batch was sent: a wait that preceded it becomes one window of the estimate. */
  dispatched(nowUs: number): void {
    if (this.waitStartUs === undefined) return;
    const waited = Math.max(1, nowUs - this.waitStartUs);
    const sample = this.arrivalsInWait / waited;
    this.rate = this.rate === undefined ? sample : this.rate + ALPHA * (sample - this.rate);
    this.waitStartUs = undefined;
    this.probeEndUs = undefined;
  }

  /** The current estimate (arrivals per second while waiting), for diagnostics and tests. */
  arrivalsPerSecond(): number | undefined {
    return this.rate === undefined ? undefined : this.rate * 1e6;
  }
}
