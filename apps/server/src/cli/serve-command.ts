/**
 * `tritium serve`: tritonserver's flags, the python-like and ONNX backends, HTTP + gRPC +
 * metrics. Logs in Triton's format; SIGTERM/SIGINT stop gracefully within --exit-timeout-secs.
 */
import { onnxBackend } from '@tritium/backend-onnx';
import { tensorrtBackend } from '@tritium/backend-tensorrt';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import type { Backend } from '@tritium/core';
import { createContainer } from '../container.ts';
import { TOKENS } from '../tokens.ts';
import type { TritiumServer } from '../tritium-server.ts';
import type { TritonLog } from '../logging/triton-log.ts';
import { FlagError, parseServeFlags, SERVE_USAGE, type ServeOptions } from './flags.ts';

/** The backends `tritium serve` binds by default. */
export function defaultBackends(): Backend[] {
  return [pythonLikeBackend(), onnxBackend(), tensorrtBackend()];
}

export async function serveCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  let options: ServeOptions;
  try {
    options = parseServeFlags(args);
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`tritium serve: ${e.message}\n${SERVE_USAGE}`);
      return 2;
    }
    throw e;
  }
  const container = createContainer({ options, backends: defaultBackends() });
  const log = container.get<TritonLog>(TOKENS.Log);
  if (options.strictModelConfig) {
    log.warn('--strict-model-config is deprecated, use --disable-auto-complete-config instead');
  }
  const server = container.get<TritiumServer>(TOKENS.TritiumServer);
  try {
    await server.start();
  } catch (e) {
    log.error(`failed to start the server: ${(e as Error).message}`);
    await server.stop();
    return 1;
  }
  const code = await new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        log.warn(`received ${signal} again, exiting now`);
        resolve(1);
        return;
      }
      signalled = true;
      log.info(`Received ${signal}: stopping the server (in-flight requests finish within ${options.exitTimeoutSecs} s)`);
      const hardStop = setTimeout(() => {
        log.error(`Exit timeout (${options.exitTimeoutSecs} s) expired, exiting immediately`);
        resolve(1);
      }, options.exitTimeoutSecs * 1000 + 2000);
      hardStop.unref();
      server.stop().then(
        () => {
          clearTimeout(hardStop);
          log.info('Server stopped');
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          resolve(0);
        },
        (e) => {
          log.error(`error while stopping: ${(e as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  // Anything a backend left running (a stuck worker) must not keep the process alive after stop.
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}
