/**
 * s3rver (a file-backed S3 emulator on npm) for the one check fauxqs cannot make: it refuses
 * access key ids it does not know (`InvalidAccessKeyId`), as S3 does. Listens on 127.0.0.1 at an
 * ephemeral port, data in a temporary folder removed at stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface CredentialCheckingS3 {
  /** `127.0.0.1:<port>`. */
  readonly hostPort: string;
  /** The only key pair it accepts. */
  readonly credentials: { readonly AWS_ACCESS_KEY_ID: string; readonly AWS_SECRET_ACCESS_KEY: string };
  stop(): Promise<void>;
}

/** Starts s3rver with `buckets` created empty. */
export async function startCredentialCheckingS3(buckets: readonly string[]): Promise<CredentialCheckingS3> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'tritium-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  const { port } = await server.run();
  return {
    hostPort: `127.0.0.1:${port}`,
    // s3rver's built-in account (documented in its README).
    credentials: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
