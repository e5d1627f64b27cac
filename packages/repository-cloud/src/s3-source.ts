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
import type { RepositoryFetch, RepositorySource } from '@tritium/core/repository';
import { credentialFields } from './credential-file.ts';
import type { ListedObject } from './object-keys.ts';
import { objectStoreSource, type ObjectStore } from './object-store.ts';
import { parseS3Url, type S3Location } from './s3-url.ts';

export interface S3SourceOptions {
  /** Environment to read credentials from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Per-request timeout in ms (default 60 s; a download is bounded by the mirror's idle timeout instead). */
  readonly requestTimeoutMs?: number;
}

type S3Module = typeof import('@aws-sdk/client-s3');

type S3Client = InstanceType<S3Module['S3Client']>;

/** The client's settings and what an error message must never show. */
interface S3Settings {
  readonly keyId: string;
  readonly secret: string;
  readonly token: string;
  readonly profile: string;
  readonly region: string;
  readonly secrets: readonly string[];
}

/** The credentials and region for `location`, from TRITON_CLOUD_CREDENTIAL_PATH's `"s3"` entry or the environment. */
function s3Settings(location: S3Location, env: NodeJS.ProcessEnv): S3Settings {
  const { field } = credentialFields('s3', location.url, env);
  const keyId = field('key_id', 'AWS_ACCESS_KEY_ID');
  const secret = field('secret_key', 'AWS_SECRET_ACCESS_KEY');
  const token = field('session_token', 'AWS_SESSION_TOKEN');
  const profile = field('profile', 'AWS_PROFILE');
  const region = field('region') || env.AWS_DEFAULT_REGION || env.AWS_REGION || '';
  return { keyId, secret, token, profile, region, secrets: [secret, token].filter((s) => s !== '') };
}

/** The S3 client (the SDK is loaded here, on first use). */
async function connectS3(location: S3Location, c: S3Settings, requestTimeoutMs: number): Promise<{ sdk: S3Module; s3: S3Client }> {
  const sdk = await import('@aws-sdk/client-s3');
  const s3 = new sdk.S3Client({
    ...(location.endpoint ? { endpoint: location.endpoint, forcePathStyle: true } : {}),
    ...(c.region ? { region: c.region } : location.endpoint ? { region: 'us-east-1' } : {}),
    ...(c.keyId && c.secret
      ? { credentials: { accessKeyId: c.keyId, secretAccessKey: c.secret, ...(c.token ? { sessionToken: c.token } : {}) } }
      : c.profile
        ? { profile: c.profile }
        : {}),
    followRegionRedirects: true,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 10_000, requestTimeout: requestTimeoutMs },
  });
  return { sdk, s3 };
}

const listed = (key: string, size?: number, etag?: string, modified?: Date): ListedObject => ({
  key,
  size: size ?? 0,
  etag: etag ?? '',
  mtimeMs: modified?.getTime() ?? 0,
});

/** The object store over `bucket` (`connect` resolves the client; `close` destroys it once made). */
function bucketStore(bucket: string, connect: () => Promise<{ sdk: S3Module; s3: S3Client }>, close: () => Promise<void>): ObjectStore {
  return {
    async *listPages(prefix, recursive) {
      const { sdk, s3 } = await connect();
      let token: string | undefined;
      do {
        const page = await s3.send(
          new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token, ...(recursive ? {} : { Delimiter: '/' }) }),
        );
        yield {
          objects: (page.Contents ?? []).map((o) => listed(o.Key ?? '', o.Size, o.ETag, o.LastModified)),
          folders: (page.CommonPrefixes ?? []).flatMap((p) => (p.Prefix ? [p.Prefix] : [])),
        };
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    async checkRoot() {
      const { sdk, s3 } = await connect();
      await s3.send(new sdk.HeadBucketCommand({ Bucket: bucket }));
    },
    async head(key) {
      const { sdk, s3 } = await connect();
      try {
        const head = await s3.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }));
        return listed(key, head.ContentLength, head.ETag, head.LastModified);
      } catch (err) {
        if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
        throw err;
      }
    },
    async anyUnder(prefix) {
      const { sdk, s3 } = await connect();
      const page = await s3.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: 1 }));
      return (page.KeyCount ?? page.Contents?.length ?? 0) > 0;
    },
    async download(key, etag, signal): Promise<RepositoryFetch> {
      const { sdk, s3 } = await connect();
      const res = await s3.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key, ...(etag ? { IfMatch: etag } : {}) }), {
        abortSignal: signal,
      });
      if (!res.Body) throw new Error('empty response body');
      return { body: res.Body as Readable, etag: res.ETag };
    },
    close,
  };
}

/** A repository at `url` (`s3://bucket/path`, `s3://host:port/bucket/path`, `s3://https://host:port/bucket/path`). */
export function s3RepositorySource(url: string, options: S3SourceOptions = {}): RepositorySource {
  const location = parseS3Url(url);
  const settings = s3Settings(location, options.env ?? process.env);
  let client: Promise<{ sdk: S3Module; s3: S3Client }> | undefined;
  const connect = (): Promise<{ sdk: S3Module; s3: S3Client }> => (client ??= connectS3(location, settings, options.requestTimeoutMs ?? 60_000));
  const close = async (): Promise<void> => {
    if (client) (await client).s3.destroy();
  };
  return objectStoreSource(location.url, location.prefix, bucketStore(location.bucket, connect, close), settings.secrets);
}
