/** A process's resident memory, read from /proc (Linux), for tests that bound what a request costs the server. */
import { existsSync, readFileSync } from 'node:fs';

/** Why memory cannot be read on this host, or undefined where it can. */
export const PROCESS_MEMORY_UNAVAILABLE = existsSync('/proc/self/status') ? undefined : 'no /proc/<pid>/status on this host (Linux only)';

/** Resident set size of process `pid`, in MiB (0 once it is gone). */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `pid` every 10 ms while `run` runs; resolves with its result and the highest RSS seen (MiB). */
export async function peakRssDuring<T>(pid: number, run: () => Promise<T>): Promise<{ result: T; peakMiB: number }> {
  let peakMiB = rssMiB(pid);
  const timer = setInterval(() => (peakMiB = Math.max(peakMiB, rssMiB(pid))), 10);
  try {
    const result = await run();
    peakMiB = Math.max(peakMiB, rssMiB(pid));
    return { result, peakMiB };
  } finally {
    clearInterval(timer);
  }
}
