import type { Clock } from './scheduler.ts';

/**
 * One timer that calls `fire` at the earliest time it was armed for: arming it later than it is
 * armed already changes nothing, arming it earlier moves it. A batcher's queue delay, a sequence
 * slot's batch delay and the idle-sequence reaper each keep one.
 */
export class EarliestTimer {
  private timer: { cancel(): void; readonly at: number } | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly fire: () => void,
  ) {}

  /** Fires at `atUs` (the clock's µs), unless armed for earlier already. */
  armAt(atUs: number): void {
    if (this.timer && this.timer.at <= atUs) return;
    this.timer?.cancel();
    const t = this.clock.setTimer(atUs - this.clock.nowUs(), () => {
      if (this.timer === timer) this.timer = undefined;
      this.fire();
    });
    const timer = { cancel: () => t.cancel(), at: atUs };
    this.timer = timer;
  }

  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }
}
