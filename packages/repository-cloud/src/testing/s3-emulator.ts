/**
 * A real S3-compatible server for tests: fauxqs (in-memory S3 on fastify) listening on 127.0.0.1
 * at an ephemeral port, with the AWS SDK client the tests upload with. It keeps object keys
 * literally (`..` segments included), pages listings, and honours If-Match, like S3.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApp } from 'fauxqs';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

export interface S3Emulator {
  /** `127.0.0.1:<port>`, as `s3://host:port/bucket/path` names it. */
  readonly hostPort: string;
  readonly port: number;
  readonly client: S3Client;
  createBucket(bucket: string): Promise<void>;
  put(bucket: string, key: string, body: Uint8Array | string): Promise<void>;
  remove(bucket: string, key: string): Promise<void>;
  /** Uploads every file below `dir` to `bucket` under `prefix` (multipart above 8 MiB). */
  uploadFolder(bucket: string, prefix: string, dir: string): Promise<number>;
  stop(): Promise<void>;
}

/** Credentials the emulator accepts (it checks none; tests pass them as a user would). */
export const S3_TEST_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'tritium-test', AWS_SECRET_ACCESS_KEY: 'tritium-test-secret', AWS_DEFAULT_REGION: 'us-east-1' };

const PART_BYTES = 8 << 20;

export async function startS3Emulator(): Promise<S3Emulator> {
  const app = buildApp({ logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const client = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: S3_TEST_CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: S3_TEST_CREDENTIALS.AWS_SECRET_ACCESS_KEY },
  });
  const put = async (bucket: string, key: string, body: Uint8Array | string): Promise<void> => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (bytes.byteLength <= PART_BYTES) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
      return;
    }
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
    const parts = [];
    for (let off = 0, n = 1; off < bytes.byteLength; off += PART_BYTES, n++) {
      const res = await client.send(
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: n, Body: bytes.subarray(off, off + PART_BYTES) }),
      );
      parts.push({ ETag: res.ETag, PartNumber: n });
    }
    await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
  };
  return {
    hostPort: `127.0.0.1:${port}`,
    port,
    client,
    async createBucket(bucket) {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    },
    put,
    async remove(bucket, key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async uploadFolder(bucket, prefix, dir) {
      let count = 0;
      const walk = async (abs: string, rel: string): Promise<void> => {
        for (const e of await readdir(abs, { withFileTypes: true })) {
          const childRel = rel ? `${rel}/${e.name}` : e.name;
          if (e.isDirectory()) await walk(path.join(abs, e.name), childRel);
          else if (e.isFile()) {
            await put(bucket, `${prefix}${childRel}`, await readFile(path.join(abs, e.name)));
            count++;
          }
        }
      };
      await walk(dir, '');
      return count;
    },
    async stop() {
      client.destroy();
      await app.close();
    },
  };
}
