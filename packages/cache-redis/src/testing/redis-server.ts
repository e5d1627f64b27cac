/**
 * A real `redis-server` (Debian's package `redis-server`) on 127.0.0.1 for tests: a free port, no
 * persistence, stopped (SIGKILL, as an outage) and started again on the same port. `.ci/run`
 * installs the package where it is missing; elsewhere `redisServerPath()` is undefined and tests
 * skip, printing why.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export const REDIS_SKIP_REASON = 'redis-server is not installed (Debian package redis-server; .ci/run installs it)';

/** The `redis-server` binary on PATH, or undefined. */
export function redisServerPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const p = found.stdout.trim();
  return found.status === 0 && p ? p : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  readonly port: number;
  /** Kills the server at once (SIGKILL): clients see an outage. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing persists). */
  restart(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, nothing answers. `resume()` undoes it. */
  freeze(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** Starts `redis-server` with `extraArgs` (e.g. `['--requirepass', 'x']`) on a free loopback port. */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  const bin = redisServerPath();
  if (!bin) throw new Error(REDIS_SKIP_REASON);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...extraArgs];
    const c = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${out}`)), 10_000);
      const onData = (b: Buffer): void => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      c.stdout!.on('data', onData);
      c.stderr!.on('data', onData);
      c.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}) before it was ready:\n${out}`));
      });
    });
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGCONT');
    c.kill('SIGKILL');
    await gone;
  };
  await launch();
  return {
    port,
    kill,
    restart: launch,
    freeze: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    stop: kill,
  };
}
