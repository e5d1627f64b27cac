/**
 * Holds a batch that is ready but below the smallest preferred size, while its hold source says
 * waiting pays (a pipeline ensemble whose last step is busy, see ensemble/runtime/pipeline-hold.ts).
 */

/** How long a ready batch may wait for more requests (BatcherDeps.hold). */
export interface BatchHold {
  /** Microseconds a ready batch of `size` rows may still wait at `nowUs` (0: send it now). */
  holdUs(nowUs: number, size: number): number;
}

/**
 * The batcher's side of a hold. A hold never grows: more arrivals reaching the smallest preferred
 * size, or its end, send the batch. A request is held at most once (a batch whose head waited
 * through an earlier hold is not held), so none waits more than the queue delay plus one hold
 * beyond what instances being busy costs it.
 */
export class HoldGate {
  /** The end of the hold under way (one per batch: a held batch is sent when it ends). */
  private untilUs: number | undefined;
  /** When the last hold ended: requests queued before then already waited through one. */
  private lastEndUs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly hold: BatchHold,
    /** Rows below which a ready batch may be held (the smallest preferred size, else the maximum). */
    private readonly below: number,
  ) {}

  /**
   * Whether a ready batch of `size` rows whose oldest request arrived at `headArrivalUs` waits now;
   * returns when the hold ends (arm a timer for it), or undefined to send the batch.
   */
  holdUntil(nowUs: number, size: number, headArrivalUs: number): number | undefined {
    if (size < this.below) {
      if (this.untilUs === undefined && headArrivalUs > this.lastEndUs) {
        const us = this.hold.holdUs(nowUs, size);
        if (us > 0) this.untilUs = nowUs + us;
      }
      if (this.untilUs !== undefined && nowUs < this.untilUs) return this.untilUs;
    }
    if (this.untilUs !== undefined) {
      this.untilUs = undefined;
      this.lastEndUs = nowUs;
    }
    return undefined;
  }
}
