/**
 * Where `tritium dev` listens for `tritium model run` (a Unix socket per repository, in a folder
 * private to this user), and how a run finds it. Kept free of the server's modules: a warm
 * `model run` loads only this, the client and node's own modules.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The folder of this user's dev sockets: `$XDG_RUNTIME_DIR/tritium`, else `<tmpdir>/tritium-dev-<uid>`. */
export function devSocketDir(): string {
  const runtime = process.env['XDG_RUNTIME_DIR'];
  return runtime ? path.join(runtime, 'tritium') : path.join(os.tmpdir(), `tritium-dev-${process.getuid?.() ?? 'user'}`);
}

/** The socket of the dev server of `repository` (its real path decides: a link to it finds the same server). */
export function devSocketPath(repository: string): string {
  let real: string;
  try {
    real = realpathSync(repository);
  } catch {
    real = path.resolve(repository);
  }
  return path.join(devSocketDir(), `${createHash('sha256').update(real).digest('hex').slice(0, 20)}.sock`);
}

/**
 * Creates the socket folder (0700) and refuses one that is a link, belongs to another user, or
 * that others may write to: a socket there would answer runs in this user's name.
 */
export function ensureDevSocketDir(dir: string = devSocketDir()): string | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) return `${dir} is not a directory (a link?)`;
  if (uid !== undefined && st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`;
  if ((st.mode & 0o077) !== 0) return `others may use ${dir} (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}
