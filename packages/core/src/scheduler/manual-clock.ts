import type { Clock } from './scheduler.ts';

/** A Clock that only moves when told to, so scheduler tests run deterministically. */
export interface ManualClock extends Clock {
  /** Moves time forward by `us`, firing due timers in deadline order (timers set while firing included). */
  advance(us: number): void;
  /** Timers not yet fired or cancelled. */
  readonly pendingTimers: number;
}

/** Creates a ManualClock starting at `startUs` (default 0). */
export function manualClock(startUs = 0): ManualClock {
  let now = startUs;
  let nextId = 0;
  const timers = new Map<number, { at: number; fn: () => void; id: number }>();
  return {
    nowUs: () => now,
    setTimer(delayUs, fn) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, delayUs), fn, id });
      return { cancel: () => void timers.delete(id) };
    },
    advance(us) {
      const end = now + us;
      for (;;) {
        let due: { at: number; fn: () => void; id: number } | undefined;
        for (const t of timers.values()) if (t.at <= end && (!due || t.at < due.at || (t.at === due.at && t.id < due.id))) due = t;
        if (!due) break;
        timers.delete(due.id);
        now = Math.max(now, due.at);
        due.fn();
      }
      now = end;
    },
    get pendingTimers() {
      return timers.size;
    },
  };
}
