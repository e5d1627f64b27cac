/** Runs a Node script to its end, as a user runs the CLI: its exit code and both outputs. */
import { spawn } from 'node:child_process';
import { TRITIUM_BIN } from './serve-process.ts';

export interface CliRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** `node <file> ...args` in `cwd`, stdin closed. */
export function runNode(file: string, args: readonly string[], cwd: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

/** `tritium ...args` (apps/server/bin/tritium.mjs) in `cwd`. */
export function runTritium(args: readonly string[], cwd: string): Promise<CliRun> {
  return runNode(TRITIUM_BIN, args, cwd);
}
