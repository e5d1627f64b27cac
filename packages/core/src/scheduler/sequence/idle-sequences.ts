import type { Clock } from '../scheduler.ts';
import { EarliestTimer } from '../earliest-timer.ts';

/** What became of a sequence found idle: its slot was released, it still waits for one, or it is gone. */
export type IdleOutcome = 'released' | 'waiting' | 'gone';

/** How often a backlogged idle sequence is looked at again (Triton: every 50 ms). */
const BACKLOG_RECHECK_US = 50_000;

/**
 * Triton's idle-sequence reaper: a sequence whose last request arrived more than
 * `max_sequence_idle_microseconds` ago gives up its slot (`onIdle` releases it).
 */
export class IdleSequences {
  /** Last request arrival per sequence. */
  private readonly lastSeen = new Map<string, number>();
  private readonly timer: EarliestTimer;

  constructor(
    private readonly clock: Clock,
    private readonly idleUs: number,
    private readonly onIdle: (corr: string) => IdleOutcome,
  ) {
    this.timer = new EarliestTimer(clock, () => this.reap());
  }

  /** A request of sequence `corr` arrived at `nowUs`. */
  seen(corr: string, nowUs: number): void {
    this.lastSeen.set(corr, nowUs);
    this.timer.armAt(nowUs + this.idleUs);
  }

  /** Sequence `corr` ended otherwise (cancelled). */
  forget(corr: string): void {
    this.lastSeen.delete(corr);
  }

  /** No timer may keep the process alive (nothing is in flight after stop). */
  stop(): void {
    this.timer.cancel();
  }

  private reap(): void {
    const now = this.clock.nowUs();
    let next = Number.POSITIVE_INFINITY;
    for (const [corr, seen] of this.lastSeen) {
      const due = seen + this.idleUs;
      if (due > now) {
        next = Math.min(next, due);
        continue;
      }
      const outcome = this.onIdle(corr);
      if (outcome === 'waiting') next = Math.min(next, now + BACKLOG_RECHECK_US);
      else this.lastSeen.delete(corr);
    }
    if (next !== Number.POSITIVE_INFINITY) this.timer.armAt(next);
  }
}
