/**
 * `tritium tune`: the search lives in `@tritium/perf` (tools/perf/src/tune); this command gives it a
 * server of its own: `tritium serve` in a child process (so the load generator and the server do not
 * share an event loop), explicit model control, loopback, ephemeral ports, the tuned model loaded.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** This package's bin (two folders above both src/cli and dist/cli). */
const TRITIUM_BIN = fileURLToPath(new URL('../../bin/tritium.mjs', import.meta.url));
const START_TIMEOUT_MS = 180_000;

/** Starts `tritium serve` on `repository` with `model` loaded; resolves once HTTP and gRPC listen. */
function startServer(repository: string, model: string, protocol: 'http' | 'grpc'): Promise<{ url: string; pid?: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      TRITIUM_BIN,
      'serve',
      `--model-repository=${repository}`,
      '--model-control-mode=explicit',
      `--load-model=${model}`,
      '--http-address=127.0.0.1',
      '--grpc-address=127.0.0.1',
      '--allow-metrics=false',
      '--http-port=0',
      '--grpc-port=0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`tritium serve did not start within ${START_TIMEOUT_MS / 1000} s:\n${text}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      text = (text + chunk.toString()).slice(-64 * 1024);
      const http = /Started HTTPService at [^:\s]+:(\d+)/.exec(text)?.[1];
      const grpc = /Started GRPCInferenceService at [^:\s]+:(\d+)/.exec(text)?.[1];
      if (http && grpc) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        // Keep draining the child's output so it never blocks on a full pipe.
        child.stdout!.resume();
        child.stderr!.resume();
        resolve({ url: `127.0.0.1:${protocol === 'grpc' ? grpc : http}`, ...(child.pid ? { pid: child.pid } : {}), stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`tritium serve exited (${signal ?? code}) before it was ready:\n${text}`));
    });
  });
}

export async function tuneCommand(args: string[]): Promise<number> {
  const { tuneMain } = await import('@tritium/perf');
  return tuneMain(args, { startServer, tty: process.stderr.isTTY === true });
}
