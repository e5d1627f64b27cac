/**
 * The type check of a model at load: its `model.ts` (and local imports) against the author API and
 * its config's types, generated fresh from the config being loaded (so a `model-types.d.ts` on
 * disk that the config has outgrown is reported, not trusted). What a problem does is the mode:
 * `error` refuses the load, `warn` logs it, `off` skips the check (the server's
 * `--model-type-check`, or the model's `tritium.type_check` parameter).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InferError, type Logger, type ModelConfig } from '@tritium/core';
import { PARAMETER_KEYS } from '../parameters.ts';
import type { TranspiledModel } from '../transpile.ts';
import { generateModelTypes, isGenerated, MODEL_TYPES_BASENAME } from '../types/model-types.ts';
import { modelCompilerOptions, serverTypePaths } from '../types/compiler-options.ts';
import { checkModelSources } from './type-checker.ts';

export const TYPE_CHECK_MODES = ['error', 'warn', 'off'] as const;
export type TypeCheckMode = (typeof TYPE_CHECK_MODES)[number];

/** The model's mode: its `tritium.type_check` parameter, else the server's. INVALID_ARG naming the key on a bad value. */
export function typeCheckMode(config: ModelConfig, serverMode: TypeCheckMode): TypeCheckMode {
  const raw = config.parameters?.[PARAMETER_KEYS.typeCheck]?.string_value;
  if (raw === undefined || raw === '') return serverMode;
  if ((TYPE_CHECK_MODES as readonly string[]).includes(raw)) return raw as TypeCheckMode;
  throw new InferError(
    'INVALID_ARG',
    `model '${config.name}': parameter '${PARAMETER_KEYS.typeCheck}' must be one of ${TYPE_CHECK_MODES.join(', ')}, got '${raw}'`,
  );
}

export interface ModelCheck {
  readonly config: ModelConfig;
  readonly modelDir: string;
  readonly modelFile: string;
  readonly bundle: TranspiledModel;
  readonly cacheDir: string;
  /** The model resolves its packages from its own package.json only (no fallback to the server's). */
  readonly ownPackages: boolean;
  readonly log: Logger;
  /** See CheckInput.idleMs. */
  readonly idleMs?: number;
}

/** Reasons a check was skipped that were logged already (once per process each). */
const warned = new Set<string>();

/** Generated files beside model.ts that no longer match the config (each a problem). */
async function staleGenerated(check: ModelCheck): Promise<{ problems: string[]; declarations: string; ownDeclarations: boolean }> {
  const fresh = generateModelTypes(check.config);
  const dir = path.dirname(check.modelFile);
  const problems: string[] = [];
  let ownDeclarations = false;
  for (const [ext, text] of [['.d.ts', fresh.declarations], ['.js', fresh.javascript]] as const) {
    const file = path.join(dir, `${MODEL_TYPES_BASENAME}${ext}`);
    const onDisk = await readFile(file, 'utf8').catch(() => undefined);
    if (onDisk === undefined) continue;
    if (!isGenerated(onDisk)) {
      if (ext === '.d.ts') ownDeclarations = true;
      continue;
    }
    if (onDisk !== text) problems.push(`${file}: out of date with the model's config: run \`tritium types ${check.modelDir}\``);
  }
  return { problems, declarations: fresh.declarations, ownDeclarations };
}

/**
 * Checks one model; resolves with the problems (`file:line:column: error TSnnnn: message`, or a
 * stale generated file). A check that cannot run (TypeScript not installed, a timeout) is
 * skipped with a warning, once per reason.
 */
export async function checkModel(check: ModelCheck): Promise<string[]> {
  if (!/\.[cm]?ts$/.test(check.modelFile)) return [];
  const stale = await staleGenerated(check);
  const server = serverTypePaths();
  const outcome = await checkModelSources({
    rootFile: check.modelFile,
    overlay: stale.ownDeclarations ? {} : { [path.join(path.dirname(check.modelFile), `${MODEL_TYPES_BASENAME}.d.ts`)]: stale.declarations },
    options: modelCompilerOptions(server),
    modelDir: check.modelDir,
    readRoots: [...[server.modelApi, server.typeRoot].flatMap((p) => (p ? [path.dirname(p)] : [])), ...(server.coreTypes ? [server.coreTypes] : [])],
    ...(check.ownPackages || !server.modelApi ? {} : { fallbackDir: path.dirname(server.modelApi) }),
    sources: check.bundle.sources,
    cacheDir: check.cacheDir,
    ...(check.idleMs !== undefined ? { idleMs: check.idleMs } : {}),
  });
  if ('skipped' in outcome) {
    if (!warned.has(outcome.skipped)) {
      warned.add(outcome.skipped);
      check.log.warn(`model.ts files are not type-checked: ${outcome.skipped}`);
    }
    return stale.problems;
  }
  return [...stale.problems, ...outcome.problems];
}

/** What the mode does with the problems: INVALID_ARG listing them (error), a warning each (warn). */
export function applyCheck(problems: readonly string[], mode: TypeCheckMode, check: Pick<ModelCheck, 'config' | 'log'>): void {
  if (problems.length === 0) return;
  const name = check.config.name;
  if (mode === 'warn') {
    for (const p of problems) check.log.warn(`model '${name}': ${p}`);
    return;
  }
  throw new InferError(
    'INVALID_ARG',
    `model '${name}': model.ts does not type-check (load it anyway with parameter '${PARAMETER_KEYS.typeCheck}' set to 'warn', ` +
      `or the server's --model-type-check=warn):\n${problems.join('\n')}`,
  );
}
