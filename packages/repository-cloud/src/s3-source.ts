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
import type { RepositoryFetch, RepositorySource } from '@tritium/core';
import { credentialField, credentialFromFile } from './credential-file.ts';
import type { ListedObject } from './object-keys.ts';
import { objectStoreSource } from './object-store.ts';
import { parseS3Url } from './s3-url.ts';

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

  const object = (key: string, size?: number, etag?: string, modified?: Date): ListedObject => ({
    key,
    size: size ?? 0,
    etag: etag ?? '',
    mtimeMs: modified?.getTime() ?? 0,
  });

  return objectStoreSource(
    location.url,
    location.prefix,
    {
      async *listPages(prefix, recursive) {
        const { sdk, s3 } = await connect();
        let token: string | undefined;
        do {
          const page = await s3.send(
            new sdk.ListObjectsV2Command({ Bucket: location.bucket, Prefix: prefix, ContinuationToken: token, ...(recursive ? {} : { Delimiter: '/' }) }),
          );
          yield {
            objects: (page.Contents ?? []).map((o) => object(o.Key ?? '', o.Size, o.ETag, o.LastModified)),
            folders: (page.CommonPrefixes ?? []).flatMap((p) => (p.Prefix ? [p.Prefix] : [])),
          };
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      },
      async checkRoot() {
        const { sdk, s3 } = await connect();
        await s3.send(new sdk.HeadBucketCommand({ Bucket: location.bucket }));
      },
      async head(key) {
        const { sdk, s3 } = await connect();
        try {
          const head = await s3.send(new sdk.HeadObjectCommand({ Bucket: location.bucket, Key: key }));
          return object(key, head.ContentLength, head.ETag, head.LastModified);
        } catch (err) {
          if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
          throw err;
        }
      },
      async anyUnder(prefix) {
        const { sdk, s3 } = await connect();
        const page = await s3.send(new sdk.ListObjectsV2Command({ Bucket: location.bucket, Prefix: prefix, MaxKeys: 1 }));
        return (page.KeyCount ?? page.Contents?.length ?? 0) > 0;
      },
      async download(key, etag, signal): Promise<RepositoryFetch> {
        const { sdk, s3 } = await connect();
        const res = await s3.send(new sdk.GetObjectCommand({ Bucket: location.bucket, Key: key, ...(etag ? { IfMatch: etag } : {}) }), {
          abortSignal: signal,
        });
        if (!res.Body) throw new Error('empty response body');
        return { body: res.Body as Readable, etag: res.ETag };
      },
      async close() {
        if (client) (await client).s3.destroy();
      },
    },
    secrets,
  );
}
