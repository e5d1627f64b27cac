/**
 * `tritium types <model folder | repository> ...`: writes, beside each `model.ts` of a python-backend
 * model, the declarations generated from its config (`model-types.d.ts`, with `model-types.js`),
 * and a `tsconfig.json` holding the options the server type-checks with, so an editor or `tsc -p`
 * checks a model exactly as `tritium serve` does, wherever the model lives.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeModelTypes, writeTsconfig, type WrittenFile } from '@tritium/backend-python-like';
import { InferenceServer, type ModelConfig } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { defaultBackends } from './serve-command.ts';
import { parsePathCommandArgs, type CommandIo } from './path-command-args.ts';
import { type ServeOptions } from './serve-options.ts';
import { ModelPathError, resolveModelPath, type ModelTarget } from './model-paths.ts';
import { writeLines } from './cli-log.ts';

export type TypesCommandIo = CommandIo;

const USAGE = `usage: tritium types <path> [<path> ...] [options]

Writes, beside each model.ts of a model with backend "python":
  model-types.d.ts, model-types.js   its inputs and outputs from its config (as the server completes it):
                                     import { Tensor, type Request } from './model-types.js' instead of
                                     '@tritium/backend-python-like/model', and request.input('NAME') and
                                     new Tensor('NAME', data, shape) are checked by the compiler
and a tsconfig.json (in the model folder, or the repository's root for a repository) with the options
the server type-checks model.ts with. Files that exist and were not written by tritium types are kept.
Run it again after changing a config (tritium dev does it for you); serve refuses stale ones.

<path> is a model folder, its config.pbtxt, or a model repository (every model in it).

options:
  --model-config-name <name>, --disable-auto-complete-config, --backend-config <backend>,<k>=<v>   as for serve
`;

const SERVE_FLAGS = ['model-config-name', 'disable-auto-complete-config', 'strict-model-config', 'backend-config'];

/** The configs of a repository's python models as the server completes them (a model that does not load: its config.pbtxt as written). */
async function pythonConfigs(repository: string, targets: readonly ModelTarget[], options: ServeOptions): Promise<Map<string, ModelConfig>> {
  const whole = targets.some((t) => t.model === undefined);
  const named = [...new Set(targets.flatMap((t) => (t.model ? [t.model] : [])))];
  const server = new InferenceServer({
    repositories: [repository],
    backends: defaultBackends({ modelTypeCheck: 'off' }),
    modelControlMode: 'explicit',
    startupModels: whole ? ['*'] : named,
    checkOnly: true,
    exitOnError: false,
    disableAutoCompleteConfig: options.disableAutoCompleteConfig,
    strictModelConfig: options.strictModelConfig,
    ...(options.modelConfigName ? { modelConfigName: options.modelConfigName } : {}),
    backendConfig: options.backendConfig,
  });
  const configs = new Map<string, ModelConfig>();
  try {
    await server.start();
    const models = whole ? (await server.repositoryIndex()).map((e) => e.name) : named;
    for (const model of new Set(models)) {
      let config: ModelConfig | undefined;
      try {
        config = server.modelConfig(model);
      } catch {
        const file = path.join(repository, model, 'config.pbtxt');
        try {
          config = normalizeModelConfig(parseModelConfigText(readFileSync(file, 'utf8'), { file }), { modelName: model });
        } catch {
          config = undefined;
        }
      }
      if (config?.backend === 'python') configs.set(model, config);
    }
  } finally {
    await server.stop();
  }
  return configs;
}

function report(io: TypesCommandIo, files: readonly WrittenFile[]): void {
  for (const f of files) {
    if (f.status === 'kept') writeLines((t) => io.stderr.write(t), '', `kept ${f.file}: it exists and was not written by tritium types`);
    else io.stdout.write(`${f.status} ${f.file}\n`);
  }
}

export async function typesCommand(args: string[], io: TypesCommandIo = process): Promise<number> {
  const parsed = parsePathCommandArgs('types', args, { usage: USAGE, serveFlags: SERVE_FLAGS }, io);
  if (typeof parsed === 'number') return parsed;
  const { options, paths } = parsed;
  let failed = false;
  const byRepository = new Map<string, ModelTarget[]>();
  for (const p of paths) {
    try {
      const target = resolveModelPath(p);
      byRepository.set(target.repository, [...(byRepository.get(target.repository) ?? []), target]);
    } catch (e) {
      if (!(e instanceof ModelPathError)) throw e;
      io.stderr.write(`${e.message}\n`);
      failed = true;
    }
  }
  for (const [repository, targets] of byRepository) {
    const configs = await pythonConfigs(repository, targets, options);
    for (const t of targets.filter((x) => x.model !== undefined && !configs.has(x.model))) {
      io.stderr.write(`${t.given}: not a model with backend "python": nothing to write\n`);
    }
    for (const [model, config] of configs) report(io, await writeModelTypes(path.join(repository, model), config));
    const folders = new Set(targets.map((t) => (t.model === undefined ? repository : path.join(repository, t.model))));
    for (const folder of folders) {
      if (folder === repository || configs.has(path.basename(folder))) report(io, [await writeTsconfig(folder)]);
    }
  }
  return failed ? 1 : 0;
}
