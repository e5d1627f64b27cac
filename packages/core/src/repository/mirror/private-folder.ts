import { lstat, mkdir } from 'node:fs/promises';
import { InferError } from '../../errors.ts';

/**
 * Creates `dir` (and parents) owner-only (0700), or checks an existing one before the server writes
 * model files into it: a real folder (not a link), owned by this process's user, writable by no
 * one else. Another local user who could write there could swap a model under the server.
 */
export async function ensurePrivateFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 }).catch((err: Error) => {
    throw new InferError('INTERNAL', `failed to create repository cache folder '${dir}': ${err.message}`);
  });
  const st = await lstat(dir);
  const refuse = (why: string): never => {
    throw new InferError('INTERNAL', `refusing repository cache folder '${dir}': ${why}`);
  };
  if (st.isSymbolicLink() || !st.isDirectory()) refuse('not a folder (a link or a file)');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) refuse(`owned by uid ${st.uid}, not by this server's uid ${uid}`);
  if ((st.mode & 0o022) !== 0) refuse(`writable by group or others (mode ${(st.mode & 0o777).toString(8)})`);
}
