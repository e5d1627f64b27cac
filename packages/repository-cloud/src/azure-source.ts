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
import { InferError, type RepositoryFetch, type RepositorySource } from '@tritium/core';
import { parseAzureUrl } from './azure-url.ts';
import { credentialField, credentialFromFile } from './credential-file.ts';
import { objectStoreSource } from './object-store.ts';

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

  return objectStoreSource(
    location.url,
    location.prefix,
    {
      async *listPages(prefix, recursive) {
        const { container } = await connect();
        const pages = recursive
          ? container.listBlobsFlat({ prefix }).byPage({ maxPageSize: 1000 })
          : container.listBlobsByHierarchy('/', { prefix }).byPage({ maxPageSize: 1000 });
        for await (const page of pages) {
          yield {
            objects: page.segment.blobItems.map((b) => ({
              key: b.name,
              size: b.properties.contentLength ?? 0,
              etag: b.properties.etag ?? '',
              mtimeMs: b.properties.lastModified?.getTime() ?? 0,
            })),
            folders: ((page.segment as { blobPrefixes?: { name: string }[] }).blobPrefixes ?? []).map((p) => p.name),
          };
        }
      },
      async checkRoot() {
        await (await connect()).container.getProperties();
      },
      async head(key) {
        const { container } = await connect();
        try {
          const p = await container.getBlobClient(key).getProperties();
          return { key, size: p.contentLength ?? 0, etag: p.etag ?? '', mtimeMs: p.lastModified?.getTime() ?? 0 };
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode === 404) return undefined;
          throw err;
        }
      },
      async anyUnder(prefix) {
        const { container } = await connect();
        const first = await container.listBlobsFlat({ prefix }).byPage({ maxPageSize: 1 }).next();
        return !first.done && first.value.segment.blobItems.length > 0;
      },
      async download(key, etag, signal): Promise<RepositoryFetch> {
        const { container } = await connect();
        const res = await container.getBlobClient(key).download(0, undefined, {
          abortSignal: signal,
          ...(etag ? { conditions: { ifMatch: etag } } : {}),
        });
        if (!res.readableStreamBody) throw new Error('empty response body');
        return { body: res.readableStreamBody as Readable, etag: res.etag };
      },
    },
    secrets,
  );
}
