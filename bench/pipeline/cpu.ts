import { readFileSync } from 'node:fs';

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); 0 elsewhere. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11] = utime, fields[12] = stime (clock ticks; 100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
