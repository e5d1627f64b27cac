/**
 * Attacks of the `fault` test backend on what a worker shares with the server: its output and the
 * engine. Each returns what happened, as text.
 */
import { ftruncateSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import v8, { setFlagsFromString } from 'node:v8';

function attempt(fn: () => unknown): string {
  try {
    fn();
    return 'done';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  }
}

/** Whether V8's natives syntax (`%GetOptimizationStatus`) compiles, i.e. whether `--allow-natives-syntax` is on. */
function nativesSyntax(): boolean {
  try {
    new Function('return %GetOptimizationStatus(function () {})');
    return true;
  } catch {
    return false;
  }
}

/**
 * `engine`: tries each way model code has to V8's flags and Node's file-writing diagnostics; the
 * JSON says, per way, `done` or the error, and whether natives syntax compiles afterwards.
 */
export async function engineDoors(): Promise<string> {
  const flag = '--allow-natives-syntax';
  const required = createRequire(import.meta.url)('v8') as typeof v8;
  const dynamic = (await import('node:v8')) as typeof v8;
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const binding = (process as { binding?: (id: string) => { setFlagsFromString?: (f: string) => void } }).binding;
  const outcomes: Record<string, string | boolean> = {
    named: attempt(() => setFlagsFromString(flag)),
    default: attempt(() => v8.setFlagsFromString(flag)),
    dynamic: attempt(() => dynamic.setFlagsFromString(flag)),
    require: attempt(() => required.setFlagsFromString(flag)),
    getBuiltinModule: getBuiltin ? attempt(() => (getBuiltin('node:v8') as typeof v8).setFlagsFromString(flag)) : 'absent',
    binding: attempt(() => binding!.call(process, 'v8').setFlagsFromString!(flag)),
    redefine: attempt(() => Object.defineProperty(v8, 'setFlagsFromString', { value: () => {} })),
    heapSnapshotNearLimit: attempt(() => v8.setHeapSnapshotNearHeapLimit(1)),
    createTracing: attempt(() => (createRequire(import.meta.url)('trace_events') as typeof import('node:trace_events')).createTracing({ categories: ['v8'] })),
  };
  outcomes['natives'] = nativesSyntax();
  return JSON.stringify(outcomes);
}

/**
 * `output:<what>`: `lines` (one line to stdout, one to stderr) · `rewrite` (truncates fds 1 and 2 and
 * writes a forged line at offset 0 of each: what a model could do to a log file it inherited) ·
 * `flood:<bytes>` (that many bytes of 64-byte lines to stdout).
 */
export function outputAttack(arg: string): string {
  const [what, n] = arg.split(':');
  if (what === 'lines') {
    process.stdout.write('a line on stdout\n');
    process.stderr.write('a line on stderr\n');
    return 'written';
  }
  if (what === 'rewrite') {
    return [1, 2].map((fd) => `${attempt(() => ftruncateSync(fd, 0))}/${attempt(() => writeSync(fd, 'FORGED LOG LINE\n', 0))}`).join(',');
  }
  if (what === 'flood') {
    const line = Buffer.from(`${'x'.repeat(63)}\n`);
    const block = Buffer.concat(Array.from({ length: 1024 }, () => line));
    let written = 0;
    while (written < Number(n)) {
      const offset = written % block.length;
      try {
        written += writeSync(1, block, offset, block.length - offset);
      } catch (error) {
        // fd 1 is non-blocking once Node has opened process.stdout on it: wait for the reader.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    }
    return `wrote ${written}`;
  }
  return `unknown output attack '${arg}'`;
}
