/**
 * Taking a model's versions out of service: their states change at once (UNLOADING, or UNAVAILABLE
 * for an ensemble whose composing model is gone) and they drain in the background (HeldVersions);
 * the upload folders no live version uses any more are removed.
 */
import { rm } from 'node:fs/promises';
import type { Logger } from '../logger.ts';
import type { HeldVersions } from './held-versions.ts';
import type { ModelRecord } from './model-record.ts';

/**
 * Unloads every loaded version of `record`: UNLOADING now, then UNAVAILABLE (`unloaded`) once
 * drained; a version a load replaced meanwhile is left as that load set it. An ensemble unloaded
 * because a model it uses is gone (`dependency`) reads UNAVAILABLE with that reason at once, so
 * the ensembles above it name it, while it drains.
 */
export function unloadSlots(record: ModelRecord, held: HeldVersions, log: Logger, dependency?: string): Promise<void> {
  const jobs: Promise<void>[] = [];
  for (const slot of record.slots.values()) {
    if (slot.live) {
      const live = slot.live;
      slot.down = false;
      const drained = held.retire(live).then(() => log.info(`successfully unloaded '${live.name}' version ${live.version}`));
      if (dependency !== undefined) {
        slot.live = undefined;
        slot.state = 'UNAVAILABLE';
        slot.reason = dependency;
        slot.dependencyUnloaded = true;
        jobs.push(drained);
        continue;
      }
      slot.state = 'UNLOADING';
      slot.reason = '';
      slot.dependencyUnloaded = false;
      jobs.push(
        drained.then(() => {
          if (slot.live !== live) return;
          slot.live = undefined;
          slot.state = 'UNAVAILABLE';
          slot.reason = 'unloaded';
        }),
      );
      continue;
    }
    if (slot.state !== 'UNAVAILABLE' || slot.dependencyUnloaded) {
      slot.state = 'UNAVAILABLE';
      slot.reason = 'unloaded';
    }
    // Unloaded on purpose now: it no longer waits for its composing models to come back.
    slot.dependencyUnloaded = false;
    // An ensemble unloaded for a missing model waits for it in every unloaded version.
    if (dependency !== undefined && slot.state === 'UNAVAILABLE' && slot.reason === 'unloaded') {
      slot.reason = dependency;
      slot.dependencyUnloaded = true;
    }
  }
  return Promise.all(jobs).then(() => undefined);
}

/**
 * After a load: versions the policy no longer selects (not in `wanted`, or whose folder is gone)
 * are unloaded once a version that replaces them is serving; if none of those loaded, the old ones
 * keep serving.
 */
export function unloadDroppedVersions(record: ModelRecord, wanted: ReadonlySet<number>, held: HeldVersions, log: Logger): void {
  if (![...wanted].some((v) => record.slots.get(v)?.state === 'READY')) return;
  for (const [, slot] of [...record.slots.entries()].filter(([v, slot]) => !wanted.has(v) && slot.live)) {
    const live = slot.live!;
    slot.state = 'UNLOADING';
    slot.down = false;
    void held.retire(live).then(() => {
      log.info(`successfully unloaded '${live.name}' version ${live.version}`);
      if (slot.live !== live) return;
      slot.live = undefined;
      slot.state = 'UNAVAILABLE';
      slot.reason = 'unloaded';
    });
  }
}

/** Removes the record's upload folders that `unused` picks. */
export async function removeUploads(record: ModelRecord, unused: (dir: string) => boolean): Promise<void> {
  for (const dir of [...record.overrideDirs]) {
    if (!unused(dir)) continue;
    await rm(dir, { recursive: true, force: true });
    record.overrideDirs.delete(dir);
  }
}
