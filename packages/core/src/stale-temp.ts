/**
 * Temporary files and folders that carry their writer's pid in their name, so a server can remove
 * what an earlier server left behind when it died without cleaning up (SIGKILL, OOM killer, power
 * loss): anything whose pid no longer runs is swept.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether a process with this pid runs (EPERM: it does, as another user). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the entries of `dir` whose name matches `pattern` (its first group is the writer's pid)
 * and whose writer is gone. Never this process's own. Errors (a racing sweeper) are ignored.
 */
export async function sweepStaleTemp(dir: string, pattern: RegExp): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  await Promise.all(
    names.map(async (name) => {
      const m = pattern.exec(name);
      const pid = m ? Number(m[1]) : NaN;
      if (!m || pid === process.pid || processAlive(pid)) return;
      await rm(join(dir, name), { recursive: true, force: true }).then(
        () => removed.push(name),
        () => undefined,
      );
    }),
  );
  return removed;
}
