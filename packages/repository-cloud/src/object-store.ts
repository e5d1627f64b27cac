/**
 * What S3, GCS and Azure sources share, in one place: each provider answers a few questions in its
 * own SDK's terms (an `ObjectStore`), and `objectStoreSource` makes a repository source of it —
 * key prefixes, the listing bound, folders from keys, "a folder is any key below it", and one
 * wording for failures (URL, never a credential).
 */
import { checkRelativePath, type RepositoryEntry, type RepositoryFetch, type RepositorySource } from '@tritium/core/repository';
import { MAX_LISTED_KEYS, entriesFromListing, folderPrefix, type ListedObject } from './object-keys.ts';
import { joinUrl, storeError } from './store-error.ts';

/** One page of a listing: objects, and (folder listings) the common prefixes below the prefix. */
export interface ListedPage {
  readonly objects: readonly ListedObject[];
  readonly folders: readonly string[];
}

export interface ObjectStore {
  /** The listing of keys under `prefix`, page by page; folders (delimiter `/`) unless `recursive`. */
  listPages(prefix: string, recursive: boolean): AsyncIterable<ListedPage>;
  /** Rejects unless the bucket or container answers with these credentials (Triton's CheckClient). */
  checkRoot(): Promise<void>;
  /** The object at `key`, or undefined when the store answers 404. */
  head(key: string): Promise<ListedObject | undefined>;
  /** Whether any key starts with `prefix` (a folder exists only through the objects below it). */
  anyUnder(prefix: string): Promise<boolean>;
  /** Streams `key`, pinned to `etag` (the version listed) when the store can. */
  download(key: string, etag: string, signal: AbortSignal | undefined): Promise<RepositoryFetch>;
  close?(): Promise<void>;
}

/**
 * A repository source at `url` whose files are the keys below `prefix` ('' or ending in `/`).
 * `secrets` are scrubbed from error messages in case a provider ever echoes one.
 */
export function objectStoreSource(url: string, prefix: string, store: ObjectStore, secrets: readonly string[] = []): RepositorySource {
  const fail = (action: string, path: string, err: unknown): never => {
    throw storeError(action, joinUrl(url, path), err, secrets);
  };
  const dirEntry = (path: string): RepositoryEntry => ({ path, kind: 'dir', size: 0, etag: '', mtimeMs: 0 });
  // A path from a caller names a key below the prefix only when it is relative, `/`-separated and
  // free of `.`, `..` and empty segments: refused (INVALID_ARG) before the store is asked.
  const checked = (path: string): void => {
    if (path !== '') checkRelativePath(path, url);
  };

  return {
    url,
    async list(dir, opts = {}) {
      const recursive = opts.recursive === true;
      checked(dir);
      try {
        const objects: ListedObject[] = [];
        const folders: string[] = [];
        for await (const page of store.listPages(folderPrefix(prefix, dir), recursive)) {
          objects.push(...page.objects);
          folders.push(...page.folders);
          if (objects.length + folders.length > MAX_LISTED_KEYS) throw new Error(`more than ${MAX_LISTED_KEYS} objects`);
        }
        return entriesFromListing(prefix, objects, folders, recursive, url);
      } catch (err) {
        return fail('list', dir, err);
      }
    },
    async stat(path) {
      checked(path);
      try {
        if (path === '') {
          await store.checkRoot();
          return dirEntry('');
        }
        const key = `${prefix}${path}`;
        const object = await store.head(key);
        if (object) return { path, kind: 'file', size: object.size, etag: object.etag, mtimeMs: object.mtimeMs };
        return (await store.anyUnder(`${key}/`)) ? dirEntry(path) : undefined;
      } catch (err) {
        return fail('stat', path, err);
      }
    },
    async fetch(entry, opts = {}) {
      checkRelativePath(entry.path, url);
      try {
        return await store.download(`${prefix}${entry.path}`, entry.etag, opts.signal);
      } catch (err) {
        return fail('download', entry.path, err);
      }
    },
    ...(store.close ? { close: () => store.close!() } : {}),
  };
}
