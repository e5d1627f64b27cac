import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Run-to-run agreement of the CPU figures. Wall-clock throughput on a shared machine moves 2x from
 * run to run; CPU per inference relative to the in-process limit (e) should not. Each run keeps its
 * ratios (config and concurrency → CPU per inference / (e)'s) in a git-ignored file; the next run
 * compares its own against them and says which moved by more than `tolerance`.
 */
export type CpuRatios = Readonly<Record<string, number>>;

export interface Agreement {
  /** Ratios compared (present in both runs). */
  readonly compared: number;
  /** Those that moved by more than the tolerance: key, previous, now. */
  readonly moved: ReadonlyArray<{ key: string; previous: number; now: number }>;
}

/** Compares `now` with the ratios stored at `file` (undefined when there is no previous run), then stores `now` there. */
export function compareWithPrevious(file: string, now: CpuRatios, tolerance = 0.05): Agreement | undefined {
  let previous: CpuRatios | undefined;
  if (existsSync(file)) {
    try {
      previous = JSON.parse(readFileSync(file, 'utf8')) as CpuRatios;
    } catch {
      previous = undefined;
    }
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(now, null, 1));
  if (!previous) return undefined;
  const keys = Object.keys(now).filter((k) => typeof previous![k] === 'number' && previous![k]! > 0);
  const moved = keys
    .filter((k) => Math.abs(now[k]! / previous![k]! - 1) > tolerance)
    .map((k) => ({ key: k, previous: previous![k]!, now: now[k]! }));
  return { compared: keys.length, moved };
}
