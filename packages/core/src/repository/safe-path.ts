import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { InferError } from '../errors.ts';

/** True when `child` is `parent` or lies below it (both already resolved). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolves symlinks of `target` and refuses it when the real location leaves the repository root
 * (a model folder or version folder that is a symlink pointing elsewhere on the host).
 */
export async function assertRealPathInside(root: string, target: string, what: string): Promise<string> {
  const realRoot = await realpath(root);
  let real: string;
  try {
    real = await realpath(target);
  } catch (err) {
    throw new InferError('INVALID_ARG', `unable to resolve ${what} '${target}': ${(err as Error).message}`);
  }
  if (!isInside(realRoot, real)) {
    throw new InferError(
      'INVALID_ARG',
      `${what} '${target}' resolves to '${real}', outside the model repository '${realRoot}'`,
    );
  }
  return real;
}

/**
 * Joins a relative path (e.g. a `file:` override name or a warmup data file) below `base`, refusing
 * absolute paths and `..` escapes. Returns the joined path.
 */
export function joinInside(base: string, relative: string, what: string): string {
  if (path.isAbsolute(relative) || relative.includes('\0')) {
    throw new InferError('INVALID_ARG', `${what} '${relative}' must be a relative path`);
  }
  const joined = path.resolve(base, relative);
  if (!isInside(path.resolve(base), joined)) {
    throw new InferError('INVALID_ARG', `${what} '${relative}' must stay within '${base}'`);
  }
  return joined;
}
