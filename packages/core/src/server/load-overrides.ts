/**
 * The load API's overrides (Triton's `config` and `file:<path>` load parameters): the JSON config
 * parsed, and override files written into a fresh private folder that the model then loads from.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { ConfigCodec } from '../repository/config-codec.ts';
import { joinInside } from '../repository/safe-path.ts';
import type { LoadOptions } from './server-api.ts';
import { sweepStaleTemp } from '../stale-temp.ts';
import { restrictToSandbox } from '../worker/sandbox-files.ts';

/** Override folders are named `tritium-override-<pid>-XXXXXX`; a later server sweeps those of dead pids. */
const OVERRIDE_PREFIX = `tritium-override-${process.pid}-`;
const STALE_OVERRIDE = /^tritium-override-(\d+)-/;

/** Removes override folders left by servers that died before unloading their models. */
export function sweepStaleOverrides(): Promise<string[]> {
  return sweepStaleTemp(os.tmpdir(), STALE_OVERRIDE);
}

/**
 * Bounds on what one load call may write (beyond Triton, which has none): the file count keeps one
 * request from filling the disk's inodes with empty files; the name bounds are the file system's
 * (NAME_MAX, and PATH_MAX less room for the temporary folder), checked here so they answer 400
 * naming the parameter instead of a 500 that shows the server's temporary path.
 */
export const MAX_OVERRIDE_FILES = 4096;
export const MAX_OVERRIDE_PATH_BYTES = 1024;
const MAX_NAME_BYTES = 255;

/**
 * The relative paths the `file:` parameters name, normalized, each checked: inside the model folder
 * (Triton's message), a file (not the folder itself or `..` back to a folder), within the name
 * bounds, and no file also used as another's folder.
 */
function overridePaths(dir: string, keys: readonly string[]): Map<string, string> {
  if (keys.length > MAX_OVERRIDE_FILES) {
    throw new InferError('INVALID_ARG', `the load request has ${keys.length} 'file:' parameters; at most ${MAX_OVERRIDE_FILES} are allowed`);
  }
  const out = new Map<string, string>();
  const keyOf = new Map<string, string>();
  for (const key of keys) {
    const rel = key.startsWith('file:') ? key.slice('file:'.length) : key;
    let target: string;
    try {
      target = joinInside(dir, rel, 'file parameter');
    } catch {
      // Triton's words; the path relative to the model's folder (the server's temporary folder is not shown).
      throw new InferError('INVALID_ARG', `Invalid file parameter '${key}' with normalized path '${path.normalize(rel)}' must stay within model directory.`);
    }
    const normalized = path.relative(dir, target);
    const bad = (why: string): never => {
      throw new InferError('INVALID_ARG', `Invalid file parameter '${key}': ${why}`);
    };
    if (normalized === '' || rel.split('/').at(-1) === '..' || rel.endsWith('/') || /(^|\/)\.$/.test(rel)) bad('it must name a file, not a folder');
    if (Buffer.byteLength(normalized) > MAX_OVERRIDE_PATH_BYTES) bad(`its path is longer than ${MAX_OVERRIDE_PATH_BYTES} bytes`);
    if (normalized.split(path.sep).some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES)) bad(`a name in its path is longer than ${MAX_NAME_BYTES} bytes`);
    const previous = keyOf.get(normalized);
    if (previous !== undefined) bad(`it names the same file as '${previous}'`);
    keyOf.set(normalized, key);
    out.set(key, normalized);
  }
  for (const [key, normalized] of out) {
    const parts = normalized.split(path.sep);
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join(path.sep);
      if (keyOf.has(folder)) {
        throw new InferError('INVALID_ARG', `Invalid file parameter '${key}': '${folder}' is given as a file and used as a folder`);
      }
    }
  }
  return out;
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
    const paths = overridePaths(dir, Object.keys(files));
    // Readable by the server and the model's sandbox user only (sandbox-files.ts); each folder and
    // file is made here ('wx': never through something already there).
    const folders = new Set<string>([dir]);
    for (const [key, rel] of paths) {
      const target = path.join(dir, rel);
      for (let folder = path.dirname(target); folder !== dir; folder = path.dirname(folder)) folders.add(folder);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(target, files[key]!, { mode: 0o600, flag: 'wx' });
      await restrictToSandbox(target, 'file');
    }
    for (const folder of folders) await restrictToSandbox(folder, 'dir');
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { config, dir };
}
