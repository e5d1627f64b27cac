/**
 * Paths on the command line of `tritium config` and `tritium model run`, resolved to what
 * `tritium serve` reads: a model repository and, optionally, one model in it. A model folder is
 * read as part of its repository (its parent folder), so an ensemble finds its composing models
 * exactly as it does when served.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export interface ModelTarget {
  /** The path as the user wrote it. */
  readonly given: string;
  /** The repository folder (absolute). */
  readonly repository: string;
  /** The model's folder name, or undefined for every model of the repository. */
  readonly model?: string;
  /** `--model-config-name` implied by a `<model>/configs/<name>.pbtxt` path. */
  readonly configName?: string;
}

export class ModelPathError extends Error {}

const VERSION_DIR = /^[0-9]+$/;

/** True for a folder that is a model: it holds config.pbtxt or a numeric version folder. */
export function isModelFolder(dir: string): boolean {
  if (existsSync(path.join(dir, 'config.pbtxt'))) return true;
  return readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory() && VERSION_DIR.test(e.name));
}

/**
 * A model folder, its `config.pbtxt` (or `configs/<name>.pbtxt`), or a repository. Throws
 * ModelPathError (message `<path>: why`) for anything else.
 */
export function resolveModelPath(given: string): ModelTarget {
  const abs = path.resolve(given);
  const st = statSync(abs, { throwIfNoEntry: false });
  if (!st) throw new ModelPathError(`${given}: no such file or folder`);
  if (st.isFile()) {
    const dir = path.dirname(abs);
    if (path.basename(abs) === 'config.pbtxt') return { given, repository: path.dirname(dir), model: path.basename(dir) };
    if (path.basename(dir) === 'configs' && abs.endsWith('.pbtxt')) {
      const modelDir = path.dirname(dir);
      return { given, repository: path.dirname(modelDir), model: path.basename(modelDir), configName: path.basename(abs, '.pbtxt') };
    }
    throw new ModelPathError(
      `${given}: not a model's config: give its model folder (holding config.pbtxt and version folders), its config.pbtxt, or a model repository`,
    );
  }
  if (!st.isDirectory()) throw new ModelPathError(`${given}: not a file or folder`);
  if (isModelFolder(abs)) return { given, repository: path.dirname(abs), model: path.basename(abs) };
  return { given, repository: abs };
}
