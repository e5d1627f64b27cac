/**
 * Who may read the files the server writes for a sandboxed model (the load API's uploads, the
 * python-like bundle of a `model.ts`): the server and the sandbox's own user, nobody else.
 *
 * - A server that is not root runs its sandboxes as itself: folders 0700, files 0600.
 * - A root server runs them as uid/gid 65534 (process-sandbox.ts): the files stay root's, in group
 *   65534, folders 0750 and files 0640. Group, not owner: an owner may chmod its files, and inside
 *   the sandbox's user namespace (where 65534 is mapped to root) the kernel would let it rewrite
 *   them; a group member may only read. Every sandbox shares that group, so one sandbox's files are
 *   kept from another's by Node's permission model (each reads only its own model's folder).
 */
import { chmod, chown } from 'node:fs/promises';
import { SANDBOX_UID } from './process-sandbox.ts';

export interface SandboxFileAccess {
  readonly dirMode: number;
  readonly fileMode: number;
  /** The group the files go to (root server only). */
  readonly gid?: number;
}

/** The modes (and group) of files a sandboxed model reads, for this server's uid. */
export function sandboxFileAccess(): SandboxFileAccess {
  if (process.getuid?.() === 0) return { dirMode: 0o750, fileMode: 0o640, gid: SANDBOX_UID };
  return { dirMode: 0o700, fileMode: 0o600 };
}

/** Gives `path` (written by this server) the access `sandboxFileAccess()` names for this uid. */
export async function restrictToSandbox(path: string, kind: 'dir' | 'file'): Promise<void> {
  const access = sandboxFileAccess();
  if (access.gid !== undefined) await chown(path, 0, access.gid);
  await chmod(path, kind === 'dir' ? access.dirMode : access.fileMode);
}
