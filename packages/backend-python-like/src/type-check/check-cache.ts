/**
 * Type-check results on disk, by content hash, in the bundle folder (private to the server's user:
 * see transpile.ts), so a server that starts again does not check unchanged models again. A file
 * that cannot be read or parsed is a miss; one that cannot be written is skipped.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const FOLDER = 'type-check';
/** A cached result larger than this is not kept (a model with thousands of errors is checked again). */
const MAX_BYTES = 1024 * 1024;

export async function readCachedCheck(cacheDir: string, key: string): Promise<readonly string[] | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(cacheDir, FOLDER, `${key}.json`), 'utf8'));
    return Array.isArray(parsed) && parsed.every((p) => typeof p === 'string') ? (parsed as string[]) : undefined;
  } catch {
    return undefined;
  }
}

export async function writeCachedCheck(cacheDir: string, key: string, problems: readonly string[]): Promise<void> {
  const text = JSON.stringify(problems);
  if (text.length > MAX_BYTES) return;
  try {
    await mkdir(path.join(cacheDir, FOLDER), { recursive: true, mode: 0o700 });
    await writeFile(path.join(cacheDir, FOLDER, `${key}.json`), text, { mode: 0o600 });
  } catch {
    // A cache that cannot be written costs a check next time, nothing else.
  }
}
