/**
 * vitest globalSetup: tests run on the sources, but workers (and spawned CLIs) run the compiled
 * JavaScript in dist/. `tsc -b` first (about a second when nothing changed) so a single
 * `npx vitest run <file>` never starts a worker from stale or missing output.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function build(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const { status } = spawnSync(process.execPath, [tsc, '-b'], { stdio: 'inherit' });
  // Type errors still emit JavaScript (tsc -b emits despite errors); the tests show what breaks.
  if (status !== 0) process.stderr.write(`vitest: \`tsc -b\` exited with ${status}; workers run whatever it emitted\n`);
}
