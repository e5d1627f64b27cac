/**
 * The work of `tritium model run` (see model-command.ts), done in the child process: load one model
 * of a repository with core's InferenceServer as `tritium serve` would, run one request, unload.
 */
import path from 'node:path';
import { InferError, InferenceServer, type InferenceServerApi, type InferRequest, type InferResponse, type Logger } from '@tritium/core';
import { tensorFromJson, tensorToJson, type JsonOutput } from '@tritium/backend-python-like';
import { defaultBackends } from './serve-command.ts';
import type { ServeOptions } from './serve-options.ts';
import { isModelFolder } from './model-paths.ts';
import { writeLines, writeModelLine } from './cli-log.ts';

export interface RunArgs {
  readonly folder: string;
  readonly inputs: Record<string, unknown>;
  readonly outputs: string[];
  readonly version?: number;
  readonly verbose: boolean;
  readonly serve: ServeOptions;
}

export interface ModelRunResult {
  readonly model: string;
  readonly version: number;
  /** One entry per response (a decoupled model may send several, or none). */
  readonly responses: { readonly outputs: JsonOutput[]; readonly parameters?: Readonly<Record<string, unknown>> }[];
}

/** The server's log on stderr: warnings and errors, info lines with --verbose; the model's own lines always. */
function stderrLog(verbose: boolean): Logger {
  const write = (text: string): boolean => process.stderr.write(text);
  return {
    error: (m) => writeLines(write, 'E ', m),
    warn: (m) => writeLines(write, 'W ', m),
    info: (m) => verbose && writeLines(write, 'I ', m),
    verbose: () => {},
    model: (line) => (line.level !== 'verbose' || verbose) && writeModelLine(write, line),
  };
}

/**
 * One request to a loaded model, built from JSON inputs in the shape its config implies; every
 * response (a decoupled model may send several). Used by the offline run and by `tritium dev` for
 * the runs it answers.
 */
export async function runRequest(
  server: Pick<InferenceServerApi, 'modelConfig' | 'isDecoupled' | 'infer' | 'inferStream' | 'repositoryIndex'>,
  name: string,
  a: Pick<RunArgs, 'version' | 'inputs' | 'outputs'>,
): Promise<ModelRunResult> {
  const versionText = a.version !== undefined ? String(a.version) : undefined;
  const config = server.modelConfig(name, versionText);
  const request: InferRequest = {
    id: 'model-run',
    model: name,
    ...(a.version !== undefined ? { version: a.version } : {}),
    inputs: Object.entries(a.inputs).map(([input, value]) => tensorFromJson(config, input, value)),
    ...(a.outputs.length > 0 ? { outputs: a.outputs.map((output) => ({ name: output })) } : {}),
  };
  const responses: InferResponse[] = [];
  if (server.isDecoupled(name, versionText)) {
    await new Promise<void>((resolve, reject) =>
      server.inferStream(request, { response: (r) => void responses.push(r), complete: (e) => (e ? reject(e) : resolve()) }),
    );
  } else {
    responses.push(await server.infer(request));
  }
  return {
    model: name,
    version: responses[0]?.version ?? a.version ?? Math.max(...(await server.repositoryIndex({ readyOnly: true })).filter((e) => e.name === name).map((e) => Number(e.version))),
    responses: responses.map((r) => ({ outputs: r.outputs.map(tensorToJson), ...(r.parameters ? { parameters: r.parameters } : {}) })),
  };
}

/** Loads the model from its repository, runs one request through the server, unloads. */
export async function runModel(a: RunArgs): Promise<ModelRunResult> {
  const dir = path.resolve(a.folder);
  if (!isModelFolder(dir)) throw new InferError('INVALID_ARG', `${a.folder} is not a model folder (config.pbtxt or version folders): give <repository>/<model>`);
  const name = path.basename(dir);
  const server = new InferenceServer({
    repositories: [path.dirname(dir)],
    backends: defaultBackends(a.serve),
    modelControlMode: 'explicit',
    startupModels: [name],
    disableAutoCompleteConfig: a.serve.disableAutoCompleteConfig,
    strictModelConfig: a.serve.strictModelConfig,
    ...(a.serve.modelConfigName ? { modelConfigName: a.serve.modelConfigName } : {}),
    backendConfig: a.serve.backendConfig,
    log: stderrLog(a.verbose),
  });
  try {
    await server.start();
    return await runRequest(server, name, a);
  } finally {
    await server.stop();
  }
}

