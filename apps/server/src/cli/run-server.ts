/**
 * Runs a TritiumServer the way `tritium serve` does, for the CLI and for servers built from the
 * container (examples/custom-backend-server): start (a failure is one log line and exit code 1,
 * never an uncaught stack), then serve until SIGTERM/SIGINT, stopping gracefully within
 * `--exit-timeout-secs` (a second signal exits at once). Exit code 0 when the stop finished in time,
 * 1 when the exit timeout expired (what still ran was torn down), a second signal came, or the
 * start failed; the process always ends (exit-process.ts), by SIGKILL when a worker thread stuck in
 * native code would keep it alive.
 */
import type { TritiumServer } from '../tritium-server.ts';
import { ListenError } from '../listeners.ts';
import type { ServeOptions } from './serve-options.ts';
import { exitProcess } from './exit-process.ts';

/** What a command runs beside the server (`tritium dev`'s watcher): after the start, and before the stop. */
export interface RunHooks {
  started?(): Promise<void>;
  stopping?(): Promise<void>;
}

/**
 * A signal during the start (an orchestrator stopping a pod that is still loading) must not kill
 * the process by Node's default: it is held until the start has finished, then stops the server; a
 * second one exits at once. `release` removes the handlers and gives the signal held, if any.
 */
function holdSignalsDuringStart(log: TritiumServer['log']): { release(): NodeJS.Signals | undefined } {
  let early: NodeJS.Signals | undefined;
  const onEarlySignal = (signal: NodeJS.Signals) => {
    if (early) {
      log.warn(`received ${signal} again, exiting now`);
      void exitProcess(1, log);
      return;
    }
    early = signal;
    log.info(`Received ${signal} while starting: the server stops once its start has finished`);
  };
  process.on('SIGTERM', onEarlySignal);
  process.on('SIGINT', onEarlySignal);
  return {
    release() {
      process.off('SIGTERM', onEarlySignal);
      process.off('SIGINT', onEarlySignal);
      return early;
    },
  };
}

/** Resolves with the process exit code once the server has stopped (or failed to start). */
export async function runServer(
  server: TritiumServer,
  options: Pick<ServeOptions, 'exitTimeoutSecs'> & Partial<Pick<ServeOptions, 'flagsWithoutEffect'>>,
  hooks: RunHooks = {},
): Promise<number> {
  const log = server.log;
  // A Triton deployment's flags start the server unchanged; say which of them do nothing here.
  for (const { flag, why } of options.flagsWithoutEffect ?? []) log.warn(`--${flag} has no effect in Tritium: ${why}`);
  const held = holdSignalsDuringStart(log);
  try {
    await server.start();
    await hooks.started?.();
  } catch (e) {
    held.release();
    // A port problem is already a whole line in Triton's words; anything else gets the prefix.
    log.error(e instanceof ListenError ? e.message : `failed to start the server: ${(e as Error).message}`);
    await server.stop();
    return 1;
  }
  const code = await new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        log.warn(`received ${signal} again, exiting now`);
        resolve(1);
        void exitProcess(1, log);
        return;
      }
      signalled = true;
      log.info(`Received ${signal}: stopping the server (in-flight requests finish within ${options.exitTimeoutSecs} s)`);
      const hardStop = setTimeout(() => {
        log.error(`Exit timeout (${options.exitTimeoutSecs} s) expired, exiting immediately`);
        resolve(1);
        void exitProcess(1, log);
      }, options.exitTimeoutSecs * 1000 + 2000);
      hardStop.unref();
      (hooks.stopping?.() ?? Promise.resolve())
        .catch(() => undefined)
        .then(() => server.stop())
        .then(
        (inTime) => {
          clearTimeout(hardStop);
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          if (inTime) {
            log.info('Server stopped');
            resolve(0);
          } else {
            // Triton's main: `failed to stop server` with ServerStop's error, then exit(1).
            log.error('failed to stop server: Internal - Exit timeout expired. Exiting immediately.');
            resolve(1);
          }
        },
        (e) => {
          log.error(`error while stopping: ${(e as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    const early = held.release();
    if (early) onSignal(early);
  });
  // Anything a backend left running (a stuck worker) must not keep the process alive after stop.
  setTimeout(() => void exitProcess(code, log), 1000).unref();
  return code;
}
