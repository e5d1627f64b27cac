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
import { InferError } from '@tritium/core';
import type { RepositoryFetch, RepositorySource } from '@tritium/core/repository';
import { parseAzureUrl, type AzureLocation } from './azure-url.ts';
import { credentialFields } from './credential-file.ts';
import { objectStoreSource, type ObjectStore } from './object-store.ts';

export interface AzureSourceOptions {
  /** Environment to read credentials from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

type BlobModule = typeof import('@azure/storage-blob');
type ContainerClient = InstanceType<BlobModule['ContainerClient']>;

/** How to reach the container: Triton's credential fields, or a connection string. */
interface AzureCredentials {
  readonly account: string;
  readonly key: string;
  readonly authType: string;
  readonly clientId: string;
  readonly connectionString: string;
  /** What an error message must never show. */
  readonly secrets: readonly string[];
}

/** The credentials for `location`, from TRITON_CLOUD_CREDENTIAL_PATH's `"as"` entry or the environment. */
function azureCredentials(location: AzureLocation, env: NodeJS.ProcessEnv): AzureCredentials {
  const { fromFile, field } = credentialFields('as', location.url, env);
  const account = field('account_str', 'AZURE_STORAGE_ACCOUNT') || location.account;
  const key = field('account_key', 'AZURE_STORAGE_KEY');
  const authType = field('auth_type', 'AZURE_STORAGE_AUTH_TYPE') || (key ? 'key' : '');
  const clientId = field('client_id', 'AZURE_STORAGE_CLIENT_ID');
  const connectionString = fromFile ? '' : (env.AZURE_STORAGE_CONNECTION_STRING ?? '');
  const secrets = [key, ...(/AccountKey=([^;]+)/.exec(connectionString)?.slice(1) ?? [])].filter((s) => s !== '');
  if (!['', 'key', 'managed_identity', 'default'].includes(authType)) {
    throw new InferError('INVALID_ARG', `AZURE_STORAGE_AUTH_TYPE '${authType}' for ${location.url}: expected key, managed_identity or default`);
  }
  return { account, key, authType, clientId, connectionString, secrets };
}

/** The container's client, authenticated as `c` says (the SDKs are loaded here, on first use). */
async function connectContainer(location: AzureLocation, c: AzureCredentials): Promise<ContainerClient> {
  const sdk = await import('@azure/storage-blob');
  const retryOptions = { maxTries: 3 };
  if (c.connectionString) {
    return sdk.BlobServiceClient.fromConnectionString(c.connectionString, { retryOptions }).getContainerClient(location.container);
  }
  const serviceUrl = `https://${c.account}.blob.core.windows.net`;
  let service;
  if (c.authType === 'managed_identity' || c.authType === 'default') {
    const identity = await import('@azure/identity');
    const credential =
      c.authType === 'default'
        ? new identity.DefaultAzureCredential()
        : c.clientId
          ? new identity.ManagedIdentityCredential({ clientId: c.clientId })
          : new identity.ManagedIdentityCredential();
    service = new sdk.BlobServiceClient(serviceUrl, credential, { retryOptions });
  } else if (c.key) {
    service = new sdk.BlobServiceClient(serviceUrl, new sdk.StorageSharedKeyCredential(c.account, c.key), { retryOptions });
  } else {
    service = new sdk.BlobServiceClient(serviceUrl, undefined, { retryOptions });
  }
  return service.getContainerClient(location.container);
}

/** The object store over a container (`connect` resolves its client). */
function containerStore(connect: () => Promise<ContainerClient>): ObjectStore {
  return {
    async *listPages(prefix, recursive) {
      const container = await connect();
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
      await (await connect()).getProperties();
    },
    async head(key) {
      const container = await connect();
      try {
        const p = await container.getBlobClient(key).getProperties();
        return { key, size: p.contentLength ?? 0, etag: p.etag ?? '', mtimeMs: p.lastModified?.getTime() ?? 0 };
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) return undefined;
        throw err;
      }
    },
    async anyUnder(prefix) {
      const container = await connect();
      const first = await container.listBlobsFlat({ prefix }).byPage({ maxPageSize: 1 }).next();
      return !first.done && first.value.segment.blobItems.length > 0;
    },
    async download(key, etag, signal): Promise<RepositoryFetch> {
      const container = await connect();
      const res = await container.getBlobClient(key).download(0, undefined, {
        abortSignal: signal,
        ...(etag ? { conditions: { ifMatch: etag } } : {}),
      });
      if (!res.readableStreamBody) throw new Error('empty response body');
      return { body: res.readableStreamBody as Readable, etag: res.etag };
    },
  };
}

/** A repository at `url` (`as://account/container/path`). */
export function azureRepositorySource(url: string, options: AzureSourceOptions = {}): RepositorySource {
  const location = parseAzureUrl(url);
  const credentials = azureCredentials(location, options.env ?? process.env);
  let client: Promise<ContainerClient> | undefined;
  const connect = (): Promise<ContainerClient> => (client ??= connectContainer(location, credentials));
  return objectStoreSource(location.url, location.prefix, containerStore(connect), credentials.secrets);
}
