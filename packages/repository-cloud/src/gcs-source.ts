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
import { InferError } from '@tritium/core';
import { type RepositoryFetch, type RepositorySource } from '@tritium/core/repository';
import { credentialFromFile } from './credential-file.ts';
import { parseGcsUrl } from './gcs-url.ts';
import type { ListedObject } from './object-keys.ts';
import { objectStoreSource } from './object-store.ts';

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

  return objectStoreSource(location.url, location.prefix, {
    async *listPages(prefix, recursive) {
      const bucket = await connect();
      let pageToken: string | undefined;
      do {
        const [files, next, response] = (await bucket.getFiles({
          prefix,
          autoPaginate: false,
          maxResults: 1000,
          ...(recursive ? {} : { delimiter: '/' }),
          ...(pageToken ? { pageToken } : {}),
        })) as unknown as [{ metadata: GcsObjectMetadata }[], { pageToken?: string } | null, { prefixes?: string[] } | undefined];
        yield { objects: files.map((f) => listed(f.metadata)), folders: response?.prefixes ?? [] };
        pageToken = next?.pageToken;
      } while (pageToken);
    },
    async checkRoot() {
      await (await connect()).getMetadata();
    },
    async head(key) {
      const bucket = await connect();
      try {
        const [m] = (await bucket.file(key).getMetadata()) as unknown as [GcsObjectMetadata];
        return listed(m);
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    },
    async anyUnder(prefix) {
      const [files] = await (await connect()).getFiles({ prefix, maxResults: 1, autoPaginate: false });
      return files.length > 0;
    },
    async download(key, etag, signal): Promise<RepositoryFetch> {
      const bucket = await connect();
      const generation = /^\d+$/.test(etag) ? Number(etag) : undefined;
      const stream = bucket.file(key, generation !== undefined ? { generation } : {}).createReadStream({ decompress: false });
      signal?.addEventListener('abort', () => stream.destroy(signal.reason as Error), { once: true });
      return { body: stream as Readable };
    },
  });
}
