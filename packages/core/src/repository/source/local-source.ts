/**
 * The built-in repository source: a folder on the local file system, read in place (`localRoot`),
 * as Triton reads a local repository. `list`/`stat`/`fetch` exist for callers that need the SPI
 * over any source (the repository scan, the mirror's tests).
 */
import { constants, createReadStream } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { InferError } from '../../errors.ts';
import { checkRelativePath } from './relative-path.ts';
import type { RepositoryEntry, RepositoryFetch, RepositorySource } from './repository-source.ts';

/** Bounded walk: a model folder is not expected to hold more files than this. */
const MAX_WALK_ENTRIES = 10_000;

function entryFrom(rel: string, st: { isDirectory(): boolean; size: bigint; mtimeNs: bigint; mtimeMs: bigint }): RepositoryEntry {
  const dir = st.isDirectory();
  return {
    path: rel,
    kind: dir ? 'dir' : 'file',
    size: dir ? 0 : Number(st.size),
    etag: dir ? '' : `${st.size}-${st.mtimeNs}`,
    mtimeMs: Number(st.mtimeMs),
  };
}

/** A local folder as a repository source. `given` is the path as the user wrote it (messages use it). */
export function localRepositorySource(given: string): RepositorySource {
  const root = path.resolve(given);
  const abs = (rel: string): string => (rel === '' ? root : path.join(root, ...checkRelativePath(rel, given)));

  async function listRoot(): Promise<RepositoryEntry[]> {
    // Triton words these with the path as the user gave it (LocalFileSystem::IsDirectory / GetDirectoryContents).
    const st = await stat(root).catch(() => undefined);
    if (!st) throw new InferError('INTERNAL', `failed to stat file ${given}`);
    if (!st.isDirectory()) throw new InferError('INTERNAL', `failed to open directory ${given}`);
    const names = await readdir(root).catch(() => {
      throw new InferError('INTERNAL', `failed to open directory ${given}`);
    });
    return childEntries('', names);
  }

  async function childEntries(dir: string, names: readonly string[]): Promise<RepositoryEntry[]> {
    const out: RepositoryEntry[] = [];
    for (const name of [...names].sort()) {
      const rel = dir === '' ? name : `${dir}/${name}`;
      // Follows links, like the scan always has: a linked model folder is then checked to stay
      // inside the repository when it is read.
      const st = await stat(path.join(abs(dir), name), { bigint: true }).catch(() => undefined);
      if (st) out.push(entryFrom(rel, st));
    }
    return out;
  }

  async function walk(dir: string, out: RepositoryEntry[]): Promise<void> {
    const names = (await readdir(abs(dir)).catch(() => [] as string[])).sort();
    for (const name of names) {
      if (out.length >= MAX_WALK_ENTRIES) {
        throw new InferError('INVALID_ARG', `repository '${given}': more than ${MAX_WALK_ENTRIES} files below '${dir}'`);
      }
      const rel = dir === '' ? name : `${dir}/${name}`;
      // Never follows a link while walking: a link is neither listed nor descended into.
      const st = await lstat(path.join(abs(dir), name), { bigint: true }).catch(() => undefined);
      if (!st || st.isSymbolicLink()) continue;
      if (st.isDirectory()) await walk(rel, out);
      else if (st.isFile()) out.push(entryFrom(rel, st));
    }
  }

  return {
    url: given,
    localRoot: root,
    async list(dir, options = {}) {
      if (dir === '' && !options.recursive) return listRoot();
      if (options.recursive) {
        const out: RepositoryEntry[] = [];
        await walk(dir, out);
        return out;
      }
      const names = await readdir(abs(dir)).catch(() => [] as string[]);
      return childEntries(dir, names);
    },
    async stat(rel) {
      const st = await stat(abs(rel), { bigint: true }).catch(() => undefined);
      return st ? entryFrom(rel, st) : undefined;
    },
    async fetch(entry): Promise<RepositoryFetch> {
      const file = abs(entry.path);
      // O_NOFOLLOW: a file swapped for a link after listing is refused, not followed.
      const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: Error) => {
        throw new InferError('INTERNAL', `failed to open '${entry.path}' in repository '${given}': ${err.message}`);
      });
      const st = await handle.stat({ bigint: true });
      return { body: createReadStream('', { fd: handle }), etag: `${st.size}-${st.mtimeNs}` };
    },
  };
}
