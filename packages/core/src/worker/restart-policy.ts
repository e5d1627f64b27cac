/**
 * The worker host's restart policy: how long to wait before replacing a crashed worker and when
 * a row of crashes takes the instance down. The backoff doubles with each crash of a row, from
 * `initialBackoffMs` up to `maxBackoffMs`; a completed execute, or a whole `windowMs` served
 * without a crash, ends the row; more than `maxRestarts` crashes in a row and the instance is down
 * (unless the crash is pinned on the one request the batcher re-runs alone after a crash).
 */
import type { WorkerRestartPolicy } from './types.ts';

const DEFAULTS = { maxRestarts: 5, windowMs: 60_000, initialBackoffMs: 50, maxBackoffMs: 60_000, keepTrying: true };

export type RestartSettings = Required<WorkerRestartPolicy>;

/** What to do after a crash: wait `backoffMs`, then restart; `downAfter` set: the instance is down first. */
export interface CrashVerdict {
  readonly backoffMs: number;
  /** `once` or `N times in a row`, when this crash takes the instance down. */
  readonly downAfter?: string;
}

export class RestartPolicy {
  readonly settings: RestartSettings;
  /** Crashes since the instance last ran `windowMs` without one. */
  private streak = 0;

  constructor(restart: WorkerRestartPolicy | undefined) {
    const r = { ...DEFAULTS, ...restart };
    // Long enough for the backoffs before the instance is down, plus a start.
    this.settings = { ...r, waitMs: restart?.waitMs ?? Math.min(r.initialBackoffMs * 2 ** r.maxRestarts, r.maxBackoffMs) + 30_000 };
  }

  /** The worker completed an execute: it is not in a crash loop. */
  completed(): void {
    this.streak = 0;
  }

  /** Counts a crash of a worker ready since `readyAt` (Date.now() then; undefined: never ready). */
  crashed(readyAt: number | undefined, now: number, pinned: boolean): CrashVerdict {
    const s = this.settings;
    // An instance that served for a whole window starts a new row of crashes.
    if (readyAt !== undefined && now - readyAt >= s.windowMs) this.streak = 0;
    this.streak++;
    const backoffMs = Math.min(s.initialBackoffMs * 2 ** (this.streak - 1), s.maxBackoffMs);
    if (this.streak > s.maxRestarts && !pinned) {
      return { backoffMs, downAfter: this.streak === 1 ? 'once' : `${this.streak} times in a row` };
    }
    return { backoffMs };
  }
}
