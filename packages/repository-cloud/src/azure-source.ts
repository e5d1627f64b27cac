/**
 * Azure Blob Storage repositories through @azure/storage-blob (and @azure/identity for managed
 * identities): the only file that imports them, loaded on first use. Credentials as Triton reads
 * them: an entry of TRITON_CLOUD_CREDENTIAL_PATH's `"as"` section when that variable is set
 * (`account_str`, `account_key`, `auth_type`, `client_id`); otherwise AZURE_STORAGE_ACCOUNT,
 * AZURE_STORAGE_KEY, AZURE_STORAGE_AUTH_TYPE (`key` | `managed_identity` | `default`) and
 * AZURE_STORAGE_CLIENT_ID; no key and no auth type means anonymous access (a public container).
 * Beyond Triton: AZURE_STORAGE_CONNECTION_STRING (the Azure CLI's variable) wins when set, which is
 * how a repository reaches another endpoint (Azurite, a sovereign cloud).
 */
import type { Readable } from 'node:stream';
import { InferError, type RepositoryEntry, type RepositoryFetch, type RepositorySource } from '@tritium/core';
import { parseAzureUrl } from './azure-url.ts';
import { credentialField, credentialFromFile } from './credential-file.ts';
import { MAX_LISTED_KEYS, entriesFromListing, folderPrefix, type ListedObject } from './object-keys.ts';
import { joinUrl, storeError } from './store-error.ts';

export interface AzureSourceOptions {
  /** Environment to read credentials from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

type BlobModule = typeof import('@azure/storage-blob');
type ContainerClient = InstanceType<BlobModule['ContainerClient']>;

/** A repository at `url` (`as://account/container/path`). */
export function azureRepositorySource(url: string, options: AzureSourceOptions = {}): RepositorySource {
  const location = parseAzureUrl(url);
  const env = options.env ?? process.env;
  const file = env.TRITON_CLOUD_CREDENTIAL_PATH;
  const fileCredential = credentialFromFile('as', location.url, env);
  const fromFile = fileCredential !== undefined;
  const field = (name: string, envName: string): string => (fromFile ? credentialField(fileCredential, name, file) : (env[envName] ?? ''));
  const account = field('account_str', 'AZURE_STORAGE_ACCOUNT') || location.account;
  const key = field('account_key', 'AZURE_STORAGE_KEY');
  const authType = field('auth_type', 'AZURE_STORAGE_AUTH_TYPE') || (key ? 'key' : '');
  const clientId = field('client_id', 'AZURE_STORAGE_CLIENT_ID');
  const connectionString = fromFile ? '' : (env.AZURE_STORAGE_CONNECTION_STRING ?? '');
  const secrets = [key, ...(/AccountKey=([^;]+)/.exec(connectionString)?.slice(1) ?? [])].filter((s) => s !== '');
  if (!['', 'key', 'managed_identity', 'default'].includes(authType)) {
    throw new InferError('INVALID_ARG', `AZURE_STORAGE_AUTH_TYPE '${authType}' for ${location.url}: expected key, managed_identity or default`);
  }

  let client: Promise<{ container: ContainerClient }> | undefined;
  const connect = (): NonNullable<typeof client> =>
    (client ??= (async () => {
      const sdk = await import('@azure/storage-blob');
      const retryOptions = { maxTries: 3 };
      if (connectionString) {
        return { container: sdk.BlobServiceClient.fromConnectionString(connectionString, { retryOptions }).getContainerClient(location.container) };
      }
      const serviceUrl = `https://${account}.blob.core.windows.net`;
      let service;
      if (authType === 'managed_identity' || authType === 'default') {
        const identity = await import('@azure/identity');
        const credential =
          authType === 'default'
            ? new identity.DefaultAzureCredential()
            : clientId
              ? new identity.ManagedIdentityCredential({ clientId })
              : new identity.ManagedIdentityCredential();
        service = new sdk.BlobServiceClient(serviceUrl, credential, { retryOptions });
      } else if (key) {
        service = new sdk.BlobServiceClient(serviceUrl, new sdk.StorageSharedKeyCredential(account, key), { retryOptions });
      } else {
        service = new sdk.BlobServiceClient(serviceUrl, undefined, { retryOptions });
      }
      return { container: service.getContainerClient(location.container) };
    })());

  const fail = (action: string, path: string, err: unknown): never => {
    throw storeError(action, joinUrl(location.url, path), err, secrets);
  };

  async function listAll(prefix: string, recursive: boolean): Promise<{ objects: ListedObject[]; folders: string[] }> {
    const { container } = await connect();
    const objects: ListedObject[] = [];
    const folders: string[] = [];
    const pages = recursive
      ? container.listBlobsFlat({ prefix }).byPage({ maxPageSize: 1000 })
      : container.listBlobsByHierarchy('/', { prefix }).byPage({ maxPageSize: 1000 });
    for await (const page of pages) {
      for (const b of page.segment.blobItems) {
        objects.push({ key: b.name, size: b.properties.contentLength ?? 0, etag: b.properties.etag ?? '', mtimeMs: b.properties.lastModified?.getTime() ?? 0 });
      }
      for (const p of (page.segment as { blobPrefixes?: { name: string }[] }).blobPrefixes ?? []) folders.push(p.name);
      if (objects.length + folders.length > MAX_LISTED_KEYS) throw new Error(`more than ${MAX_LISTED_KEYS} blobs`);
    }
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
        const { container } = await connect();
        if (path === '') {
          await container.getProperties();
          return { path: '', kind: 'dir', size: 0, etag: '', mtimeMs: 0 };
        }
        const name = `${location.prefix}${path}`;
        try {
          const p = await container.getBlobClient(name).getProperties();
          return { path, kind: 'file', size: p.contentLength ?? 0, etag: p.etag ?? '', mtimeMs: p.lastModified?.getTime() ?? 0 };
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode !== 404) throw err;
        }
        const first = await container.listBlobsFlat({ prefix: `${name}/` }).byPage({ maxPageSize: 1 }).next();
        return !first.done && first.value.segment.blobItems.length > 0 ? { path, kind: 'dir', size: 0, etag: '', mtimeMs: 0 } : undefined;
      } catch (err) {
        return fail('stat', path, err);
      }
    },
    async fetch(entry, opts = {}): Promise<RepositoryFetch> {
      try {
        const { container } = await connect();
        const res = await container.getBlobClient(`${location.prefix}${entry.path}`).download(0, undefined, {
          abortSignal: opts.signal,
          ...(entry.etag ? { conditions: { ifMatch: entry.etag } } : {}),
        });
        if (!res.readableStreamBody) throw new Error('empty response body');
        return { body: res.readableStreamBody as Readable, etag: res.etag };
      } catch (err) {
        return fail('download', entry.path, err);
      }
    },
  };
}
