/**
 * From object keys to repository entries, shared by every provider: an object store has flat keys,
 * the repository SPI folders. Keys under `prefix` become paths relative to the repository root,
 * each checked by core's `checkRelativePath` (a key with `..`, an empty segment or an absolute
 * form never names a file in the cache).
 */
import { checkRelativePath, type RepositoryEntry } from '@tritium/core/repository';

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly mtimeMs: number;
}

/** Most keys one listing may return before the server gives up on a repository (bounded memory). */
export const MAX_LISTED_KEYS = 100_000;

/** `base` (the repository's key prefix, '' or ending in `/`) plus a relative folder, ending in `/` unless empty. */
export function folderPrefix(base: string, dir: string): string {
  return dir === '' ? base : `${base}${dir}/`;
}

/**
 * Entries of one listing below `base`. Recursive listings refuse a bad key (the model is then
 * refused, naming it); a folder listing skips names that cannot be model folders (`..`, empty).
 */
export function entriesFromListing(
  base: string,
  objects: readonly ListedObject[],
  folders: readonly string[],
  recursive: boolean,
  url: string,
): RepositoryEntry[] {
  const out: RepositoryEntry[] = [];
  const relative = (key: string): string | undefined => {
    if (!key.startsWith(base)) return undefined;
    let rel = key.slice(base.length);
    if (rel.endsWith('/')) rel = rel.slice(0, -1);
    if (rel === '') return undefined;
    if (recursive) {
      checkRelativePath(rel, url);
      return rel;
    }
    try {
      checkRelativePath(rel, url);
      return rel;
    } catch {
      return undefined;
    }
  };
  for (const o of objects) {
    const rel = relative(o.key);
    if (rel === undefined) continue;
    // A key ending in `/` is a folder marker (consoles create them for empty folders).
    if (o.key.endsWith('/')) out.push({ path: rel, kind: 'dir', size: 0, etag: '', mtimeMs: o.mtimeMs });
    else out.push({ path: rel, kind: 'file', size: o.size, etag: o.etag, mtimeMs: o.mtimeMs });
  }
  // A folder already listed as a marker object is not listed twice. A set, not a search of `out` per
  // folder: that was objects x folders string compares on the main thread (50,000 of each, within
  // MAX_LISTED_KEYS, held it about 13 s on every repository index request and poll).
  const seen = new Set(out.map((e) => e.path));
  for (const f of folders) {
    const rel = relative(f);
    if (rel === undefined || seen.has(rel)) continue;
    seen.add(rel);
    out.push({ path: rel, kind: 'dir', size: 0, etag: '', mtimeMs: 0 });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
