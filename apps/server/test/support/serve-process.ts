/** `tritium serve` as a user runs it, in a child process on loopback with free ports, for tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const TRITIUM_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/tritium.mjs');

export interface ServeProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote so far (stdout + stderr). */
  log(): string;
  /** Resolves with the exit code once the process exited and its output was read to the end. */
  readonly exited: Promise<number | null>;
  /**
   * Resolves with the bound ports once the HTTP, gRPC and metrics services started; rejects with
   * the log when the process exits first (a failed start).
   */
  readonly started: Promise<{ http: number; grpc: number; metrics: number }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

export class ServeExited extends Error {
  constructor(
    readonly code: number | null,
    readonly output: string,
  ) {
    super(`tritium serve exited (code ${code}) before serving:\n${output}`);
  }
}

/** An installed `tritium` instead of the workspace's: its bin, and the folder to run it in. */
export interface InstalledTritium {
  readonly bin: string;
  readonly cwd: string;
}

/** A server of one's own taking serve's flags (a script built on `@tritium/server`), run in `cwd`. */
export interface ServerScript {
  readonly script: string;
  readonly cwd: string;
}

/**
 * Starts `tritium serve <args>` (or `tritium dev <repository> <args>`: the repository first, or a
 * ServerScript with `<args>`) with loopback addresses and port 0 unless `args` say otherwise;
 * `noFile` runs it under `ulimit -n <noFile>` (its pid is still the server's: the shell execs it);
 * `installed` runs an installed bin in its project folder.
 */
export function startServeProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  noFile?: number,
  command: 'serve' | 'dev' | ServerScript = 'serve',
  installed?: InstalledTritium,
): ServeProcess {
  const defaults = ['--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0'];
  const given = new Set(args.map((a) => a.split('=')[0]));
  const ports = defaults.filter((d) => !given.has(d.split('=')[0]));
  const argv =
    typeof command === 'object'
      ? [command.script, ...ports, ...args]
      : [installed?.bin ?? TRITIUM_BIN, command, ...(command === 'dev' ? args.slice(0, 1) : []), ...ports, ...(command === 'dev' ? args.slice(1) : args)];
  const cwd = typeof command === 'object' ? command.cwd : installed?.cwd;
  const child =
    noFile === undefined
      ? spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'], env, cwd })
      : spawn('sh', ['-c', `ulimit -n ${noFile} && exec "$0" "$@"`, process.execPath, ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env, cwd });
  let text = '';
  child.stdout!.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      // 'exit' may come before the last of the output was read (a loaded machine): wait for both
      // pipes to end, bounded, since a grandchild (a sandboxed model process) could hold them open.
      const ended = (s: Readable) => new Promise<void>((done) => (s.readableEnded || s.destroyed ? done() : s.once('end', done).once('close', done)));
      const bound = new Promise<void>((done) => setTimeout(done, 2000).unref());
      void Promise.race([Promise.all([ended(child.stdout!), ended(child.stderr!)]), bound]).then(() => resolve(code));
    }),
  );
  const started = new Promise<{ http: number; grpc: number; metrics: number }>((resolve, reject) => {
    const port = (service: string): number | undefined => {
      const m = new RegExp(`Started ${service} at [^:\\s]+:(\\d+)`).exec(text);
      return m ? Number(m[1]) : undefined;
    };
    const timer = setInterval(() => {
      const http = port('HTTPService');
      const grpc = port('GRPCInferenceService');
      const metrics = port('Metrics Service');
      if (http !== undefined && grpc !== undefined && metrics !== undefined) {
        clearInterval(timer);
        resolve({ http, grpc, metrics });
      }
    }, 25);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new ServeExited(code, text));
    });
  });
  started.catch(() => undefined);
  return {
    child,
    log: () => text,
    exited,
    started,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Triton's error log lines (`E1121 22:10:05.123456 <pid> file:line] message`): the messages. */
export function errorLines(log: string): string[] {
  return log.split('\n').filter((l) => /^E\d{4} /.test(l));
}
