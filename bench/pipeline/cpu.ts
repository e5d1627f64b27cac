import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); 0 elsewhere. */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** utime + stime of a /proc stat file, in seconds; 0 when it cannot be read. */
function statCpuSeconds(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11] = utime, fields[12] = stime (clock ticks; 100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds used so far by `root` (all its threads) and every live process below it (a
 * process-isolated model's sandbox and node), from /proc (Linux); 0 elsewhere. A child's time counts
 * only while it lives: compare two readings taken while the same children run.
 */
export function treeCpuSeconds(root: number = process.pid): number {
  const parentOf = new Map<number, number>();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    return 0;
  }
  let total = 0;
  for (const pid of parentOf.keys()) {
    let p: number | undefined = pid;
    while (p !== undefined && p !== root && p > 1) p = parentOf.get(p);
    if (p === root) total += cpuSeconds(pid);
  }
  return total;
}

/** CPU seconds of thread `tid` of process `pid` (its main thread: `tid` = `pid`); 0 elsewhere. */
export function threadCpuSeconds(pid: number, tid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`);
}
