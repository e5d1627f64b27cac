/**
 * The server's side of type-checking `model.ts`: one worker thread per process runs TypeScript
 * (check-worker.ts), so the main thread only routes; results are kept by content hash (in memory,
 * and on disk in the bundle folder, private to this user), so loading a model whose files did not
 * change costs a hash. Bounds: one check at a time, 60 s each (past it the worker is ended and the
 * check skipped, with a warning), a 1 GiB heap; the worker ends after 30 s idle (its memory goes;
 * `tritium dev` keeps it, so a reload does not pay for TypeScript's start again).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { compiledModule } from '@tritium/core/worker';
import type { CheckReply, CheckRequest } from './check-protocol.ts';
import { readCachedCheck, writeCachedCheck } from './check-cache.ts';

export const CHECK_TIMEOUT_MS = 60_000;
const IDLE_MS = 30_000;
const HEAP_MB = 1024;
const MEMORY_ENTRIES = 256;

export type CheckOutcome =
  /** Problems found (empty: the model type-checks). */
  | { readonly problems: readonly string[] }
  /** The check could not run (TypeScript missing, a timeout): why. */
  | { readonly skipped: string };

export interface CheckInput extends Omit<CheckRequest, 'id'> {
  /** The model's own files (model.ts and its local imports): their contents key the cache. */
  readonly sources: readonly string[];
  /** Folder for the on-disk cache (the bundle folder). */
  readonly cacheDir: string;
  /** How long the worker stays after its last check (default 30 s; Infinity: while the process runs, as tritium dev wants). */
  readonly idleMs?: number;
}

let tsVersion: string | null | undefined;

/** TypeScript's version, or null when it is not installed (nothing is loaded to find out). */
export function typescriptVersion(): string | null {
  if (tsVersion === undefined) {
    try {
      const file = createRequire(import.meta.url).resolve('typescript/package.json');
      tsVersion = (createRequire(import.meta.url)(file) as { version?: string }).version ?? 'unknown';
    } catch {
      tsVersion = null;
    }
  }
  return tsVersion;
}

const memory = new Map<string, readonly string[]>();

/** Names, sizes and times of the declaration files directly in `dir` ('' when it cannot be read). */
async function declarationsStamp(dir: string): Promise<string> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stamps = await Promise.all(
    names
      .filter((name) => name.endsWith('.d.ts'))
      .sort()
      .map(async (name) => {
        const info = await stat(path.join(dir, name)).catch(() => undefined);
        return info ? `${name}:${info.size}:${info.mtimeMs}` : name;
      }),
  );
  return stamps.join(',');
}

async function cacheKey(input: CheckInput, version: string): Promise<string> {
  const hash = createHash('sha256').update(`typescript ${version}\0${JSON.stringify(input.options)}\0${input.rootFile}\0${input.fallbackDir ?? ''}\0`);
  for (const [file, text] of Object.entries(input.overlay).sort(([a], [b]) => a.localeCompare(b))) hash.update(`${file}\0${text}\0`);
  // The server's declarations the model is checked against: a server updated in place checks again.
  for (const root of input.readRoots) hash.update(`${root}\0${await declarationsStamp(root)}\0`);
  for (const file of [...input.sources].sort()) {
    const text = await readFile(file).catch(() => undefined);
    hash.update(`${file}\0`).update(text ?? '\u0000missing').update('\0');
  }
  return hash.digest('hex');
}

interface Waiting {
  resolve(outcome: CheckOutcome): void;
  timer: NodeJS.Timeout;
}

class CheckWorker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private idle: NodeJS.Timeout | undefined;
  private idleMs = IDLE_MS;

  run(request: Omit<CheckRequest, 'id'>, idleMs: number = IDLE_MS): Promise<CheckOutcome> {
    this.idleMs = idleMs;
    const worker = this.start();
    clearTimeout(this.idle);
    const id = this.nextId++;
    return new Promise<CheckOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ skipped: `the type check did not finish within ${CHECK_TIMEOUT_MS / 1000} s` });
        this.stop();
      }, CHECK_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(id, { resolve, timer });
      worker.ref();
      worker.postMessage({ ...request, id } satisfies CheckRequest);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(compiledModule(new URL('./check-worker.ts', import.meta.url)), {
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.on('message', (reply: CheckReply) => {
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      clearTimeout(w.timer);
      w.resolve('problems' in reply ? { problems: reply.problems } : { skipped: reply.unavailable });
      if (this.waiting.size === 0) this.rest();
    });
    const fail = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const [, w] of this.waiting) {
        clearTimeout(w.timer);
        w.resolve({ skipped: why });
      }
      this.waiting.clear();
    };
    worker.on('error', (error) => fail(`the type check worker failed: ${error.message}`));
    worker.on('exit', (code) => fail(`the type check worker exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Idle: let the process exit, and end the worker after a while. */
  private rest(): void {
    this.worker?.unref();
    clearTimeout(this.idle);
    if (!Number.isFinite(this.idleMs)) return;
    this.idle = setTimeout(() => this.stop(), this.idleMs);
    this.idle.unref();
  }

  private stop(): void {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) void worker.terminate();
  }
}

const checker = new CheckWorker();

/**
 * Type-checks one model (see the file comment). Resolves with its problems as
 * `file:line:column: error TSnnnn: message`, or with why the check was skipped.
 */
export async function checkModelSources(input: CheckInput): Promise<CheckOutcome> {
  const version = typescriptVersion();
  if (version === null) return { skipped: "the optional dependency 'typescript' is not installed (npm install typescript)" };
  const key = await cacheKey(input, version);
  const known = memory.get(key) ?? (await readCachedCheck(input.cacheDir, key));
  if (known) return { problems: known };
  const { sources: _sources, cacheDir, idleMs, ...request } = input;
  const outcome = await checker.run({ ...request, readRoots: [...request.readRoots, path.dirname(input.rootFile)] }, idleMs);
  if ('problems' in outcome) {
    if (memory.size >= MEMORY_ENTRIES) memory.delete(memory.keys().next().value!);
    memory.set(key, outcome.problems);
    await writeCachedCheck(cacheDir, key, outcome.problems);
  }
  return outcome;
}
