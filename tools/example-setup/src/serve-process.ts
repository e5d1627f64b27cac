import { spawn, type ChildProcess } from 'node:child_process';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `tritium` command's entry (apps/server/bin/tritium.mjs). */
export const TRITIUM_BIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../../apps/server/bin/tritium.mjs');

export interface ServeProcess {
  readonly process: ChildProcess;
  /** `127.0.0.1:<port>` of the HTTP and gRPC endpoints. */
  readonly httpUrl: string;
  readonly grpcUrl: string;
  /** Everything the server logged so far. */
  logs(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServeOptions {
  /** Extra `tritium serve` flags (after the repository). */
  readonly args?: readonly string[];
  /** Give up waiting for the ports after this long (default 120 s). */
  readonly timeoutMs?: number;
  /** Extra environment. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs `tritium serve --model-repository <repo>` as a child process on 127.0.0.1 with free
 * ports (port 0), exactly as a user starts it, and resolves once the HTTP and gRPC services
 * report their ports in Triton's log lines ("Started HTTPService at ..."). Rejects with the
 * server's log when it exits first or does not come up in time.
 */
export function startTritium(repository: string, options: ServeOptions = {}): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [
      TRITIUM_BIN,
      'serve',
      '--model-repository',
      repository,
      '--http-address', '127.0.0.1',
      '--grpc-address', '127.0.0.1',
      '--metrics-address', '127.0.0.1',
      '--http-port', '0',
      '--grpc-port', '0',
      '--metrics-port', '0',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } },
  );
  let text = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async (graceMs = 10_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
  };
  return new Promise<ServeProcess>((resolveStart, rejectStart) => {
    let http: string | undefined;
    let grpc: string | undefined;
    const timer = setTimeout(() => {
      void stop(1000);
      rejectStart(new Error(`tritium serve did not start within ${options.timeoutMs ?? 120_000} ms:\n${text}`));
    }, options.timeoutMs ?? 120_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      http ??= /Started HTTPService at [^:\s]+:(\d+)/.exec(text)?.[1];
      grpc ??= /Started GRPCInferenceService at [^:\s]+:(\d+)/.exec(text)?.[1];
      if (http && grpc) {
        clearTimeout(timer);
        resolveStart({
          process: child,
          httpUrl: `127.0.0.1:${http}`,
          grpcUrl: `127.0.0.1:${grpc}`,
          logs: () => text,
          stop,
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      rejectStart(new Error(`tritium serve exited (${signal ?? code}) before it was ready:\n${text}`));
    });
  });
}
