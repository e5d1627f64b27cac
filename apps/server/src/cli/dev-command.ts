/**
 * `tritium dev <repository>`: serves a repository as `tritium serve` does (explicit model control,
 * every model loaded, a model that fails to load does not stop the server) and watches it: a saved
 * file in a model's folder reloads that model (dev-reloader.ts); `tritium model run` answers from
 * this server through its socket (warm: no load); `--inspect <model>` opens Node's inspector in
 * that model's instances.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { InferError, escapeControl, type InferenceServerApi } from '@tritium/core';
import { createContainer } from '../container.ts';
import { TOKENS } from '../tokens.ts';
import type { TritiumServer } from '../tritium-server.ts';
import { TritonLog } from '../logging/triton-log.ts';
import { DevReloader } from '../dev/dev-reloader.ts';
import { DevSocket } from '../dev/dev-socket.ts';
import { devSocketPath } from '../dev/dev-socket-path.ts';
import { DevWatcher } from '../dev/dev-watcher.ts';
import type { DevLogLine, DevRunReply, DevRunRequest } from '../dev/dev-protocol.ts';
import { FlagError, parseServeFlags } from './flags.ts';
import { type ServeOptions } from './serve-options.ts';
import { runServer } from './run-server.ts';
import { defaultBackends } from './serve-command.ts';
import { runRequest } from './model-run.ts';

const USAGE = `usage: tritium dev <repository> [--inspect <model>] ... [serve options]

Serves the repository as \`tritium serve\` does and watches it:
  - a saved file in a model's folder (model.ts, config.pbtxt, ...) reloads that model: the new
    version loads and warms beside the serving one and takes traffic once ready, the old one
    drains; a reload that fails is shown once, with file:line:column, and the old version keeps
    serving. A model's generated model-types files follow its config. A new folder loads, a
    removed one unloads.
  - what the models log and print appears here.
  - \`tritium model run <repository>/<model> --input ...\` answers from this server, warm.
  - --inspect <model>   (repeatable) that model's instances open Node's inspector on 127.0.0.1
                        (the URL is logged; breakpoints in model.ts map through its source map).
                        They run as worker threads; anyone on this machine who can reach the
                        port can run code in the server: for your own machine only.

Ports, logging and every other option as for serve (tritium serve --help); the repository is a
local folder.
`;

interface DevArgs {
  readonly repository: string;
  readonly inspect: string[];
  readonly options: ServeOptions;
}

function parseDevArgs(args: readonly string[]): DevArgs {
  const inspect: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--inspect') {
      const model = args[++i];
      if (!model || model.startsWith('-')) throw new FlagError('--inspect needs a model name');
      inspect.push(model);
    } else if (arg.startsWith('--inspect=')) inspect.push(arg.slice('--inspect='.length));
    else rest.push(arg);
  }
  // The repository comes first (or as --model-repository).
  const serveArgs = [...rest];
  const repository = serveArgs[0] !== undefined && !serveArgs[0].startsWith('-') ? serveArgs.shift() : undefined;
  const options = parseServeFlags([...serveArgs, ...(repository ? ['--model-repository', repository] : []), '--model-control-mode', 'explicit', '--load-model', '*', '--exit-on-error', 'false']);
  if (options.modelRepositories.length !== 1) throw new FlagError('tritium dev watches one repository: give one folder');
  const folder = options.modelRepositories[0]!;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(folder) || !existsSync(folder)) throw new FlagError(`${folder}: tritium dev serves a local folder`);
  return { repository: path.resolve(folder), inspect, options };
}

/** Answers one `tritium model run` with the lines the models wrote while it ran. */
async function answerRun(api: InferenceServerApi, log: TritonLog, request: DevRunRequest): Promise<DevRunReply> {
  const logs: DevLogLine[] = [];
  const stop = log.listenToModels((line) => {
    if (logs.length < 1000) logs.push({ source: line.source, level: line.level, text: escapeControl(line.text) });
  });
  try {
    const result = await runRequest(api, request.model, { inputs: { ...request.inputs }, outputs: [...request.outputs], ...(request.version !== undefined ? { version: request.version } : {}) });
    // A line printed just before the answer may still be on its way through the worker's stream.
    await new Promise((r) => setTimeout(r, 20));
    return { ok: true, result, logs };
  } catch (error) {
    const e = InferError.from(error);
    return { ok: false, code: e.code, message: e.message, logs };
  } finally {
    stop();
  }
}

export async function devCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  let dev: DevArgs;
  try {
    dev = parseDevArgs(args);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    process.stderr.write(`tritium dev: ${e.message}\n${USAGE}`);
    return 2;
  }
  const { options, repository } = dev;
  const log = new TritonLog({ info: options.logInfo, warning: options.logWarning, error: options.logError, verbose: options.logVerbose, format: options.logFormat, ...(options.logFile ? { file: options.logFile } : {}) });
  const container = createContainer({ options, log, backends: defaultBackends({ modelTypeCheck: options.modelTypeCheck, modelInstallDependencies: options.modelInstallDependencies, inspect: dev.inspect, dev: true }) });
  const server = container.get<TritiumServer>(TOKENS.TritiumServer);
  const api = container.get<InferenceServerApi>(TOKENS.InferenceServer);
  const reloader = new DevReloader(repository, api, log);
  const watcher = new DevWatcher(repository, (model) => reloader.changed(model));
  let socket: DevSocket | undefined;
  return runServer(server, options, {
    started: async () => {
      watcher.start();
      try {
        socket = await DevSocket.listen(devSocketPath(repository), (request) => answerRun(api, log, request));
        log.info(`tritium dev: watching ${repository}; tritium model run answers from this server (${socket.path})`);
      } catch (e) {
        log.warn(`tritium dev: watching ${repository}; tritium model run will load models itself: ${(e as Error).message}`);
      }
    },
    stopping: async () => {
      watcher.close();
      await socket?.close();
    },
  });
}
