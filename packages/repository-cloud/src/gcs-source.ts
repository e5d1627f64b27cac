/**
 * Google Cloud Storage repositories through @google-cloud/storage: the only file that imports it,
 * loaded on first use. Credentials as Triton reads them: the credential-file path from
 * TRITON_CLOUD_CREDENTIAL_PATH's `"gs"` section when that variable is set, otherwise Google's
 * application default credentials (GOOGLE_APPLICATION_CREDENTIALS, then the attached service
 * account). The SDK's STORAGE_EMULATOR_HOST points it at another endpoint.
 *
 * An object's ETag here is its generation (it changes on every write of the content), and reads
 * pin that generation, so a download never mixes two versions of a file.
 */
import type { Readable } from 'node:stream';
import type { RepositoryEntry, RepositoryFetch, RepositorySource } from '@tritium/core';
import { credentialFromFile } from './credential-file.ts';
import { parseGcsUrl } from './gcs-url.ts';
import { MAX_LISTED_KEYS, entriesFromListing, folderPrefix, type ListedObject } from './object-keys.ts';
import { joinUrl, storeError } from './store-error.ts';
import { InferError } from '@tritium/core';

export interface GcsSourceOptions {
  /** Environment to read credentials from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

type StorageModule = typeof import('@google-cloud/storage');
type Bucket = ReturnType<InstanceType<StorageModule['Storage']>['bucket']>;

interface GcsObjectMetadata {
  name?: string;
  size?: string | number;
  generation?: string | number;
  etag?: string;
  updated?: string;
}

function listed(m: GcsObjectMetadata): ListedObject {
  return {
    key: m.name ?? '',
    size: Number(m.size ?? 0),
    etag: String(m.generation ?? m.etag ?? ''),
    mtimeMs: m.updated ? Date.parse(m.updated) : 0,
  };
}

/** A repository at `url` (`gs://bucket/path`). */
export function gcsRepositorySource(url: string, options: GcsSourceOptions = {}): RepositorySource {
  const location = parseGcsUrl(url);
  const env = options.env ?? process.env;
  const keyFile = credentialFromFile('gs', location.url, env);
  if (keyFile !== undefined && typeof keyFile !== 'string') {
    throw new InferError('INVALID_ARG', `cloud credential file '${env.TRITON_CLOUD_CREDENTIAL_PATH}': a "gs" entry must be the path of a credential JSON file`);
  }

  let client: Promise<Bucket> | undefined;
  const connect = (): Promise<Bucket> =>
    (client ??= import('@google-cloud/storage').then((sdk) =>
      new sdk.Storage({ ...(keyFile ? { keyFilename: keyFile } : {}), retryOptions: { maxRetries: 2 } }).bucket(location.bucket),
    ));

  const fail = (action: string, path: string, err: unknown): never => {
    throw storeError(action, joinUrl(location.url, path), err);
  };

  async function listAll(prefix: string, recursive: boolean): Promise<{ objects: ListedObject[]; folders: string[] }> {
    const bucket = await connect();
    const objects: ListedObject[] = [];
    const folders: string[] = [];
    let pageToken: string | undefined;
    do {
      const [files, next, response] = (await bucket.getFiles({
        prefix,
        autoPaginate: false,
        maxResults: 1000,
        ...(recursive ? {} : { delimiter: '/' }),
        ...(pageToken ? { pageToken } : {}),
      })) as unknown as [{ metadata: GcsObjectMetadata }[], { pageToken?: string } | null, { prefixes?: string[] } | undefined];
      for (const f of files) objects.push(listed(f.metadata));
      folders.push(...(response?.prefixes ?? []));
      if (objects.length + folders.length > MAX_LISTED_KEYS) throw new Error(`more than ${MAX_LISTED_KEYS} objects`);
      pageToken = next?.pageToken;
    } while (pageToken);
    return { objects, folders };
  }

  return {
    url: location.url,
    async list(dir, opts = {}) {
      try {
        const { objects, folders } = await listAll(folderPrefix(location.prefix, dir), opts.recursive === true);
        return entriesFromListing(location.prefix, objects, folders, opts.recursive === true, location.url);
      } catch (err) {
        return fail('list', dir, err);
      }
    },
    async stat(path): Promise<RepositoryEntry | undefined> {
      try {
        const bucket = await connect();
        if (path === '') {
          await bucket.getMetadata();
          return { path: '', kind: 'dir', size: 0, etag: '', mtimeMs: 0 };
        }
        const name = `${location.prefix}${path}`;
        try {
          const [m] = (await bucket.file(name).getMetadata()) as unknown as [GcsObjectMetadata];
          const o = listed(m);
          return { path, kind: 'file', size: o.size, etag: o.etag, mtimeMs: o.mtimeMs };
        } catch (err) {
          if ((err as { code?: number }).code !== 404) throw err;
        }
        const [files] = await bucket.getFiles({ prefix: `${name}/`, maxResults: 1, autoPaginate: false });
        return files.length > 0 ? { path, kind: 'dir', size: 0, etag: '', mtimeMs: 0 } : undefined;
      } catch (err) {
        return fail('stat', path, err);
      }
    },
    async fetch(entry, opts = {}): Promise<RepositoryFetch> {
      try {
        const bucket = await connect();
        const generation = /^\d+$/.test(entry.etag) ? Number(entry.etag) : undefined;
        const stream = bucket.file(`${location.prefix}${entry.path}`, generation !== undefined ? { generation } : {}).createReadStream({ decompress: false });
        opts.signal?.addEventListener('abort', () => stream.destroy(opts.signal!.reason as Error), { once: true });
        return { body: stream as Readable };
      } catch (err) {
        return fail('download', entry.path, err);
      }
    },
  };
}
