/**
 * The load API's overrides (Triton's `config` and `file:<path>` load parameters): the JSON config
 * parsed, and override files written into a fresh private folder that the model then loads from.
 */
import { chmod, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { ConfigCodec } from '../repository/config-codec.ts';
import { joinInside } from '../repository/safe-path.ts';
import type { LoadOptions } from './server-api.ts';
import { sweepStaleTemp } from '../stale-temp.ts';

/** Override folders are named `tritium-override-<pid>-XXXXXX`; a later server sweeps those of dead pids. */
const OVERRIDE_PREFIX = `tritium-override-${process.pid}-`;
const STALE_OVERRIDE = /^tritium-override-(\d+)-/;

/** Removes override folders left by servers that died before unloading their models. */
export function sweepStaleOverrides(): Promise<string[]> {
  return sweepStaleTemp(os.tmpdir(), STALE_OVERRIDE);
}

export interface LoadOverride {
  readonly config?: ModelConfig;
  /** Private folder holding the override files; the caller removes it when the model unloads. */
  readonly dir?: string;
}

/** Parses and writes the overrides of one load call; throws INVALID_ARG/UNSUPPORTED with Triton's words. */
export async function prepareLoadOverride(
  name: string,
  options: LoadOptions,
  deps: { readonly codec: ConfigCodec; readonly allowFiles: boolean },
): Promise<LoadOverride> {
  let config: ModelConfig | undefined;
  if (options.configJson !== undefined) {
    try {
      config = deps.codec.fromJson(options.configJson);
    } catch (err) {
      throw new InferError('INVALID_ARG', `Invalid config override: ${InferError.from(err).message}`);
    }
    if (!config.name) config = { ...config, name };
  }
  const files = options.files ?? {};
  if (Object.keys(files).length === 0) return { config };
  if (!deps.allowFiles) {
    throw new InferError('UNSUPPORTED', 'model file override through the load API is disabled on this server');
  }
  if (!config) throw new InferError('INVALID_ARG', "Load parameter 'config' must be specified for model file override");
  const dir = await mkdtemp(path.join(os.tmpdir(), OVERRIDE_PREFIX));
  try {
    // A sandboxed instance may run as another uid (process isolation under a root server): let it read.
    await chmod(dir, 0o755);
    for (const [key, bytes] of Object.entries(files)) {
      const rel = key.startsWith('file:') ? key.slice('file:'.length) : key;
      let target: string;
      try {
        target = joinInside(dir, rel, 'file parameter');
      } catch {
        throw new InferError(
          'INVALID_ARG',
          `Invalid file parameter '${key}' with normalized path '${path.resolve(dir, rel)}' must stay within model directory.`,
        );
      }
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, bytes);
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { config, dir };
}
