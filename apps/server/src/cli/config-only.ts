/**
 * `tritium config --config-only <path...>`: configs checked by themselves, as Triton's config
 * loader reads them before any model file or backend is involved (ModelRepositoryManager's
 * InitializeModelInfo): parse, normalize (defaults; nothing read from a version folder),
 * ValidateModelConfig with the folder-name rule, and ValidateModelIOConfig where the config
 * leaves nothing to auto-complete; then every ensemble among the configs given is wired against
 * its composing models' configs (Triton's ValidateEnsembleConfig). No model file is opened and no
 * backend loads, so a CI job can lint configs whose model files live elsewhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { InferError, ModelConfig } from '@tritium/core';
import { defaultConfigCodec } from '@tritium/core/repository';
import { composingModels, configSourcePosition, findCircularDependency, isEnsembleConfig, validateEnsembleModels } from '@tritium/core/config';

export interface ConfigOnlyOptions {
  /** `--model-config-name`: a model folder's `configs/<name>.pbtxt` when present. */
  readonly modelConfigName?: string;
  /** `--disable-auto-complete-config`: inputs and outputs are validated as written, always. */
  readonly disableAutoCompleteConfig: boolean;
}

export interface ConfigOnlyResult {
  /** The configs that passed, normalized, in the order given. */
  readonly configs: ModelConfig[];
  /** One line per problem: `file:line:column: message` where a position is known. */
  readonly problems: string[];
  /** Lines worth knowing that are not problems (a model folder without a config file). */
  readonly notes: string[];
}

/** One config file to check, and the folder it names its model after (undefined: a loose file). */
interface ConfigFile {
  readonly file: string;
  readonly folderName?: string;
}

interface Checked {
  readonly source: ConfigFile;
  readonly parsed?: ModelConfig;
  readonly config?: ModelConfig;
  readonly error?: InferError;
  /** Inputs and outputs were validated (nothing left for a backend to complete). */
  readonly ioChecked: boolean;
}

function isDirectory(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** The config file of a model folder (`configs/<name>.pbtxt` first when selected), if it has one. */
function modelConfigFile(dir: string, configName: string | undefined): string | undefined {
  const custom = configName ? path.join(dir, 'configs', `${configName}.pbtxt`) : undefined;
  if (custom && existsSync(custom)) return custom;
  const plain = path.join(dir, 'config.pbtxt');
  return existsSync(plain) ? plain : undefined;
}

/** A path as config files: a file, a model folder, a repository (each model folder in it) or a folder of .pbtxt files. */
function configFilesOf(given: string, options: ConfigOnlyOptions, notes: string[], problems: string[]): ConfigFile[] {
  const p = path.resolve(given);
  if (!existsSync(p)) {
    problems.push(`${given}: no such file or folder`);
    return [];
  }
  if (!isDirectory(p)) {
    const parent = path.dirname(p);
    // <model>/config.pbtxt and <model>/configs/<name>.pbtxt name their model folder; other files stand alone.
    if (path.basename(p) === 'config.pbtxt') return [{ file: p, folderName: path.basename(parent) }];
    if (path.basename(parent) === 'configs') return [{ file: p, folderName: path.basename(path.dirname(parent)) }];
    return [{ file: p }];
  }
  const own = modelConfigFile(p, options.modelConfigName);
  if (own) return [{ file: own, folderName: path.basename(p) }];
  const models = readdirSync(p)
    .sort()
    .filter((name) => !name.startsWith('.') && isDirectory(path.join(p, name)));
  const files: ConfigFile[] = [];
  for (const name of models) {
    const file = modelConfigFile(path.join(p, name), options.modelConfigName);
    if (file) files.push({ file, folderName: name });
    else notes.push(`${path.join(p, name)}: no config.pbtxt (its config comes from its model file): not checked`);
  }
  if (models.length > 0) return files;
  // A folder of loose config files (a CI job's checked-in configs): each stands alone.
  const loose = readdirSync(p)
    .sort()
    .filter((name) => name.endsWith('.pbtxt') && !isDirectory(path.join(p, name)));
  if (loose.length === 0) problems.push(`${given}: no config.pbtxt here, no model folders and no .pbtxt files`);
  return loose.map((name) => ({ file: path.join(p, name) }));
}

/** Inputs and outputs are checked where no backend would complete them. */
function checksIo(config: ModelConfig, options: ConfigOnlyOptions): boolean {
  return options.disableAutoCompleteConfig || isEnsembleConfig(config) || (config.input.length > 0 && config.output.length > 0);
}

function checkOne(source: ConfigFile, options: ConfigOnlyOptions): Checked {
  let parsed: ModelConfig | undefined;
  try {
    parsed = defaultConfigCodec.parseText(readFileSync(source.file, 'utf8'), source.file);
    const modelName = source.folderName ?? parsed.name;
    const config = defaultConfigCodec.normalize(parsed, { modelName });
    const ioChecked = checksIo(config, options);
    const validated = ioChecked ? config : { ...config, input: [], output: [], batch_input: [], batch_output: [] };
    if (source.folderName !== undefined) defaultConfigCodec.validate(validated, source.folderName);
    else defaultConfigCodec.validate(validated, validated.name);
    return { source, parsed, config, ioChecked };
  } catch (e) {
    return { source, ...(parsed ? { parsed } : {}), error: e as InferError, ioChecked: false };
  }
}

/** `file:line:column: message` for a parse error (positioned already) or a field's validation error. */
function locate(c: Checked, error: InferError): string {
  const e = error as InferError & { line?: number; file?: string; fieldPath?: unknown };
  if (typeof e.line === 'number' && typeof e.file === 'string') return error.message;
  const at = c.parsed && typeof e.fieldPath === 'string' ? configSourcePosition(c.parsed, e.fieldPath) : undefined;
  return at ? `${c.source.file}:${at.line}:${at.column}: ${error.message}` : `${c.source.file}: ${error.message}`;
}

/** Triton's ensemble checks among the configs given: steps name given models, no cycle, tensors wire up. */
function checkEnsemble(c: Checked, byName: ReadonlyMap<string, Checked>): string | undefined {
  const config = c.config!;
  const E = config.name;
  const missing = composingModels(config).filter((m) => !byName.has(m));
  if (missing.length > 0) {
    return `ensemble ${E} contains models that are not available or ambiguous: ${missing.join(', ')} (not among the configs given)`;
  }
  const cycle = findCircularDependency(E, (name) => byName.get(name)?.config);
  if (cycle) return cycle.message;
  for (const m of composingModels(config)) {
    const step = byName.get(m)!;
    if (step.error) return `ensemble '${E}' depends on '${m}' which is not valid. Model '${m}' failed with error: ${step.error.message}`;
    if (!step.ioChecked) return undefined; // its inputs and outputs come from its model file: wiring is checked when it loads
  }
  try {
    validateEnsembleModels(config, (m) => byName.get(m)!.config!);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Checks the configs at `paths` by themselves. */
export function checkConfigsOnly(paths: readonly string[], options: ConfigOnlyOptions): ConfigOnlyResult {
  const notes: string[] = [];
  const problems: string[] = [];
  const files = paths.flatMap((p) => configFilesOf(p, options, notes, problems));
  const checked = files.map((f) => checkOne(f, options));
  const byName = new Map<string, Checked>();
  const twice = new Set<string>();
  for (const c of checked) {
    const name = c.config?.name ?? c.source.folderName;
    if (name === undefined) continue;
    if (byName.has(name)) twice.add(name);
    byName.set(name, c);
  }
  const configs: ModelConfig[] = [];
  for (const c of checked) {
    if (c.error) {
      problems.push(locate(c, c.error));
      continue;
    }
    const name = c.config!.name;
    const ensembleProblem = twice.has(name)
      ? `model '${name}' is given more than once`
      : isEnsembleConfig(c.config!)
        ? checkEnsemble(c, byName)
        : undefined;
    if (ensembleProblem) problems.push(`${c.source.file}: ${ensembleProblem}`);
    else configs.push(c.config!);
  }
  return { configs, problems, notes };
}
