/**
 * S3 repositories (and S3-compatible endpoints) through the AWS SDK: the only file that imports it,
 * loaded on first use. Credentials as Triton reads them: an entry of TRITON_CLOUD_CREDENTIAL_PATH's
 * `"s3"` section when that variable is set; otherwise AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, AWS_PROFILE and the shared `~/.aws` files, then the SDK's default chain (web
 * identity, container and instance roles). Region: the credential's, else AWS_DEFAULT_REGION
 * (Triton's variable), else the SDK's (AWS_REGION, the profile). Endpoints use path-style
 * addressing, as Triton's client does.
 */
import type { Readable } from 'node:stream';
import type { RepositoryEntry, RepositoryFetch, RepositorySource } from '@tritium/core';
import { credentialField, credentialFromFile } from './credential-file.ts';
import { MAX_LISTED_KEYS, entriesFromListing, folderPrefix, type ListedObject } from './object-keys.ts';
import { parseS3Url } from './s3-url.ts';
import { joinUrl, storeError } from './store-error.ts';

export interface S3SourceOptions {
  /** Environment to read credentials from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Per-request timeout in ms (default 60 s; a download is bounded by the mirror's idle timeout instead). */
  readonly requestTimeoutMs?: number;
}

type S3Module = typeof import('@aws-sdk/client-s3');

/** A repository at `url` (`s3://bucket/path`, `s3://host:port/bucket/path`, `s3://https://host:port/bucket/path`). */
export function s3RepositorySource(url: string, options: S3SourceOptions = {}): RepositorySource {
  const location = parseS3Url(url);
  const env = options.env ?? process.env;
  const fileCredential = credentialFromFile('s3', location.url, env);
  const file = env.TRITON_CLOUD_CREDENTIAL_PATH;
  const fromFile = fileCredential !== undefined;
  const keyId = fromFile ? credentialField(fileCredential, 'key_id', file) : (env.AWS_ACCESS_KEY_ID ?? '');
  const secret = fromFile ? credentialField(fileCredential, 'secret_key', file) : (env.AWS_SECRET_ACCESS_KEY ?? '');
  const token = fromFile ? credentialField(fileCredential, 'session_token', file) : (env.AWS_SESSION_TOKEN ?? '');
  const profile = fromFile ? credentialField(fileCredential, 'profile', file) : (env.AWS_PROFILE ?? '');
  const region = (fromFile ? credentialField(fileCredential, 'region', file) : '') || env.AWS_DEFAULT_REGION || env.AWS_REGION || '';
  const secrets = [secret, token].filter((s) => s !== '');

  let client: Promise<{ sdk: S3Module; s3: InstanceType<S3Module['S3Client']> }> | undefined;
  const connect = (): NonNullable<typeof client> =>
    (client ??= import('@aws-sdk/client-s3').then((sdk) => {
      const s3 = new sdk.S3Client({
        ...(location.endpoint ? { endpoint: location.endpoint, forcePathStyle: true } : {}),
        ...(region ? { region } : location.endpoint ? { region: 'us-east-1' } : {}),
        ...(keyId && secret
          ? { credentials: { accessKeyId: keyId, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) } }
          : profile
            ? { profile }
            : {}),
        followRegionRedirects: true,
        maxAttempts: 3,
        requestHandler: { connectionTimeout: 10_000, requestTimeout: options.requestTimeoutMs ?? 60_000 },
      });
      return { sdk, s3 };
    }));

  const fail = (action: string, path: string, err: unknown): never => {
    throw storeError(action, joinUrl(location.url, path), err, secrets);
  };

  async function listAll(prefix: string, recursive: boolean): Promise<{ objects: ListedObject[]; folders: string[] }> {
    const { sdk, s3 } = await connect();
    const objects: ListedObject[] = [];
    const folders: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new sdk.ListObjectsV2Command({ Bucket: location.bucket, Prefix: prefix, ContinuationToken: token, ...(recursive ? {} : { Delimiter: '/' }) }),
      );
      for (const o of page.Contents ?? []) {
        objects.push({ key: o.Key ?? '', size: o.Size ?? 0, etag: o.ETag ?? '', mtimeMs: o.LastModified?.getTime() ?? 0 });
      }
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) folders.push(p.Prefix);
      if (objects.length + folders.length > MAX_LISTED_KEYS) throw new Error(`more than ${MAX_LISTED_KEYS} objects`);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
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
        const { sdk, s3 } = await connect();
        if (path === '') {
          // Triton's CheckClient: the bucket must answer HeadBucket with these credentials.
          await s3.send(new sdk.HeadBucketCommand({ Bucket: location.bucket }));
          return { path: '', kind: 'dir', size: 0, etag: '', mtimeMs: 0 };
        }
        const key = `${location.prefix}${path}`;
        try {
          const head = await s3.send(new sdk.HeadObjectCommand({ Bucket: location.bucket, Key: key }));
          return { path, kind: 'file', size: head.ContentLength ?? 0, etag: head.ETag ?? '', mtimeMs: head.LastModified?.getTime() ?? 0 };
        } catch (err) {
          if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw err;
        }
        const page = await s3.send(new sdk.ListObjectsV2Command({ Bucket: location.bucket, Prefix: `${key}/`, MaxKeys: 1 }));
        return (page.KeyCount ?? page.Contents?.length ?? 0) > 0 ? { path, kind: 'dir', size: 0, etag: '', mtimeMs: 0 } : undefined;
      } catch (err) {
        return fail('stat', path, err);
      }
    },
    async fetch(entry, opts = {}): Promise<RepositoryFetch> {
      try {
        const { sdk, s3 } = await connect();
        const res = await s3.send(
          new sdk.GetObjectCommand({ Bucket: location.bucket, Key: `${location.prefix}${entry.path}`, ...(entry.etag ? { IfMatch: entry.etag } : {}) }),
          { abortSignal: opts.signal },
        );
        if (!res.Body) throw new Error('empty response body');
        return { body: res.Body as Readable, etag: res.ETag };
      } catch (err) {
        return fail('download', entry.path, err);
      }
    },
    async close() {
      if (client) (await client).s3.destroy();
    },
  };
}
