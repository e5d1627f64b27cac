import { createHash } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Bounded walk: a repository folder is not expected to hold more than this many entries per model. */
const MAX_ENTRIES = 10_000;

/**
 * A content stamp of a folder: every entry's relative path, size and mtime (nanosecond precision
 * where the file system has it), hashed. Poll mode compares stamps to find changed models and
 * versions without reading file contents.
 */
export async function folderStamp(dir: string): Promise<string> {
  const hash = createHash('sha1');
  let count = 0;
  async function walk(current: string, rel: string): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(current)).sort();
    } catch {
      hash.update(`!${rel}\n`);
      return;
    }
    for (const name of names) {
      if (++count > MAX_ENTRIES) return;
      const full = path.join(current, name);
      const st = await lstat(full, { bigint: true }).catch(() => undefined);
      if (!st) continue;
      const relName = rel ? `${rel}/${name}` : name;
      hash.update(`${relName}\0${st.size}\0${st.mtimeNs}\0${st.isDirectory() ? 'd' : 'f'}\n`);
      if (st.isDirectory()) await walk(full, relName);
    }
  }
  await walk(dir, '');
  return hash.digest('hex');
}

export function textStamp(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
