/**
 * `tritium config <path> [<path> ...]`: checks models exactly as `tritium serve` loads them, without
 * serving — core's InferenceServer in check-only mode reads each config, auto-completes it from
 * the model file, resolves the backend, runs the backend's load checks and checks ensembles
 * against their composing models; no instance starts. Prints the completed configs as Triton's
 * JSON (what `GET /v2/models/<m>/config` returns) and each problem as `file:line:column: message`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InferenceServer, type InferError, type Logger, type ModelConfig } from '@tritium/core';
import { configSourcePosition, modelConfigToJson, parseModelConfigText } from '@tritium/core/config';
import { defaultBackends } from './serve-command.ts';
import { parsePathCommandArgs, type CommandIo } from './path-command-args.ts';
import { type ServeOptions } from './serve-options.ts';
import { writeLines } from './cli-log.ts';
import { ModelPathError, resolveModelPath, type ModelTarget } from './model-paths.ts';
import { checkConfigsOnly } from './config-only.ts';

export type ConfigCommandIo = CommandIo;

const USAGE = `usage: tritium config <path> [<path> ...] [options]
       tritium config --config-only <path> [<path> ...] [options]

Checks models as \`tritium serve\` loads them, without serving: the config as written, auto-complete
from the model file, the backend and its load checks (model.ts compiles, model.onnx matches the
config), ensembles against their composing models. No instance starts.

<path> is a model folder, its config.pbtxt (or configs/<name>.pbtxt), or a model repository (every
model in it). A model folder is read as part of its repository (its parent folder), so an
ensemble's composing models are found as when served.

Prints the completed config as Triton's JSON (an array when several models are checked), and each
problem as file:line:column: message; exit status 1 if any model fails.

With --config-only, each config is checked by itself, as Triton's config loader reads it before any
model file or backend is involved: parse, defaults, validation (inputs and outputs too, unless the
config leaves them to auto-complete), and each ensemble wired against the configs given with it.
No model file is read and no backend loads: for CI jobs whose model files live elsewhere. <path> is
a config file, a model folder, a repository or a folder of .pbtxt files. GPU ids are not checked
(no GPU inventory is consulted).

options:
  --config-only                            check the configs alone (above)
  -q, --quiet                              print problems only
  --model-config-name <name>               use <model>/configs/<name>.pbtxt when present
  --disable-auto-complete-config           (and the deprecated --strict-model-config)
  --backend-config <backend>,<key>=<value> handed to the backend, as for serve
  --model-type-check error|warn|off        a model.ts that does not type-check is a problem (error, the
                                           default), a warning, or not checked, as for serve
`;

const SERVE_FLAGS = ['model-config-name', 'disable-auto-complete-config', 'strict-model-config', 'backend-config', 'model-type-check'];

interface Failure {
  readonly model: string;
  readonly error: InferError;
  /** Set when a version failed to load (the backend's checks), unset when the config failed. */
  readonly version?: number;
}

/** The config file a model is read from (undefined when it has none: auto-complete only). */
function configFileOf(repository: string, model: string, configName: string | undefined): string | undefined {
  const dir = path.join(repository, model);
  const custom = configName ? path.join(dir, 'configs', `${configName}.pbtxt`) : undefined;
  if (custom && existsSync(custom)) return custom;
  const file = path.join(dir, 'config.pbtxt');
  return existsSync(file) ? file : undefined;
}

/**
 * `file:line:column: message`: parse errors carry their position already; a validation error's
 * field is looked up in the file; other config problems name the file; a version that failed the
 * backend's load checks names its version folder (an ensemble's problems are its config's).
 */
function located(failure: Failure, repository: string, configName: string | undefined): string {
  const { error } = failure;
  const e = error as InferError & { line?: number; column?: number; file?: string; fieldPath?: unknown };
  if (typeof e.line === 'number' && typeof e.file === 'string') return error.message;
  const modelDir = path.join(repository, failure.model);
  // A message that already points into the model's files (a model.ts compile error) stands alone.
  if (error.message.includes(`${modelDir}${path.sep}`) && /:\d+:\d+/.test(error.message)) return error.message;
  const file = configFileOf(repository, failure.model, configName);
  let parsed: ModelConfig | undefined;
  try {
    parsed = file ? parseModelConfigText(readFileSync(file, 'utf8'), { file }) : undefined;
  } catch {
    parsed = undefined;
  }
  if (failure.version !== undefined && parsed?.platform !== 'ensemble') return `${path.join(modelDir, String(failure.version))}: ${error.message}`;
  if (!file) return `${modelDir}: ${error.message}`;
  if (typeof e.fieldPath !== 'string') return `${file}: ${error.message}`;
  const at = parsed ? configSourcePosition(parsed, e.fieldPath) : undefined;
  return `${file}:${at?.line ?? 1}:${at?.column ?? 1}: ${error.message}`;
}

/** The server's warnings (fallbacks, fields with no effect) reach the user; its info lines do not. */
function cliLog(io: ConfigCommandIo): Logger {
  return { error() {}, info() {}, verbose() {}, warn: (m) => writeLines((t) => io.stderr.write(t), 'warning: ', m) };
}

/** Checks one repository's targets with the server's own load path; returns configs and problems. */
async function checkRepository(
  repository: string,
  targets: readonly ModelTarget[],
  options: ServeOptions,
  io: ConfigCommandIo,
): Promise<{ configs: ModelConfig[]; problems: string[] }> {
  const wholeRepository = targets.some((t) => t.model === undefined);
  const named = [...new Set(targets.flatMap((t) => (t.model ? [t.model] : [])))];
  const configName = targets.find((t) => t.configName)?.configName ?? options.modelConfigName;
  const failures: Failure[] = [];
  const server = new InferenceServer({
    repositories: [repository],
    backends: defaultBackends(options),
    modelControlMode: 'explicit',
    startupModels: wholeRepository ? ['*'] : named,
    checkOnly: true,
    exitOnError: false,
    disableAutoCompleteConfig: options.disableAutoCompleteConfig,
    strictModelConfig: options.strictModelConfig,
    ...(configName ? { modelConfigName: configName } : {}),
    backendConfig: options.backendConfig,
    log: cliLog(io),
    onModelFailure: (model, error, version) => failures.push({ model, error, ...(version !== undefined ? { version } : {}) }),
  });
  const problems: string[] = [];
  const configs: ModelConfig[] = [];
  try {
    await server.start();
    const models = wholeRepository ? (await server.repositoryIndex()).map((e) => e.name) : named;
    for (const model of [...new Set(models)]) {
      const own = failures.filter((f) => f.model === model);
      if (own.length === 0) configs.push(server.modelConfig(model));
    }
    // Every failure, those of composing models included: they explain an ensemble's.
    const seen = new Set<string>();
    for (const f of failures) {
      const line = located(f, repository, configName);
      if (!seen.has(line)) problems.push(line);
      seen.add(line);
    }
  } catch (e) {
    problems.push(`${repository}: ${(e as Error).message}`);
  } finally {
    await server.stop();
  }
  return { configs, problems };
}

export async function configCommand(args: string[], io: ConfigCommandIo = process): Promise<number> {
  const parsed = parsePathCommandArgs('config', args, { usage: USAGE, serveFlags: SERVE_FLAGS, switches: ['-q', '--quiet', '--config-only'] }, io);
  if (typeof parsed === 'number') return parsed;
  const { options, paths } = parsed;
  const quiet = parsed.switches.has('-q') || parsed.switches.has('--quiet');
  const configOnly = parsed.switches.has('--config-only');

  if (configOnly) return configOnlyCommand(paths, options, quiet, io);

  const problems: string[] = [];
  const byRepository = new Map<string, ModelTarget[]>();
  for (const p of paths) {
    try {
      const target = resolveModelPath(p);
      byRepository.set(target.repository, [...(byRepository.get(target.repository) ?? []), target]);
    } catch (e) {
      if (!(e instanceof ModelPathError)) throw e;
      problems.push(e.message);
    }
  }
  const configs: ModelConfig[] = [];
  for (const [repository, targets] of byRepository) {
    const result = await checkRepository(repository, targets, options, io);
    configs.push(...result.configs);
    problems.push(...result.problems);
  }
  for (const line of problems) io.stderr.write(`${line}\n`);
  if (!quiet) printConfigs(configs, io);
  if (paths.length > 1 || byRepository.size > 0 && [...byRepository.values()].some((t) => t.some((x) => !x.model))) {
    io.stderr.write(`tritium config: ${configs.length} model(s) passed, ${problems.length} problem(s)\n`);
  }
  return problems.length > 0 ? 1 : 0;
}

function printConfigs(configs: readonly ModelConfig[], io: ConfigCommandIo): void {
  if (configs.length === 0) return;
  const json = configs.map((c) => modelConfigToJson(c, { indent: 2 }));
  io.stdout.write(json.length === 1 ? `${json[0]}\n` : `[\n${json.join(',\n')}\n]\n`);
}

/** `--config-only`: the configs alone (config-only.ts); exit status 1 on any problem. */
function configOnlyCommand(paths: readonly string[], options: ServeOptions, quiet: boolean, io: ConfigCommandIo): number {
  const { configs, problems, notes } = checkConfigsOnly(paths, {
    ...(options.modelConfigName ? { modelConfigName: options.modelConfigName } : {}),
    disableAutoCompleteConfig: options.disableAutoCompleteConfig || options.strictModelConfig,
  });
  for (const line of notes) io.stderr.write(`note: ${line}\n`);
  for (const line of problems) io.stderr.write(`${line}\n`);
  if (!quiet) printConfigs(configs, io);
  io.stderr.write(`tritium config --config-only: ${configs.length} config(s) passed, ${problems.length} problem(s)\n`);
  return problems.length > 0 ? 1 : 0;
}
