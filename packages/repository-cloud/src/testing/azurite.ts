/**
 * Azure's Blob emulator (Azurite, from npm) for tests: a child process on 127.0.0.1 at an
 * ephemeral port, in memory, telemetry off. It checks Shared Key signatures like Azure does, so a
 * wrong key is refused for real.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';

/** Azurite's well-known development account (public, documented by Microsoft). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface Azurite {
  readonly port: number;
  /** `AZURE_STORAGE_CONNECTION_STRING` for this emulator (`key` overrides the account key). */
  connectionString(key?: string): string;
  container(name: string): ContainerClient;
  /** Kills the emulator process (a network failure for whoever is connected). */
  stop(): Promise<void>;
}

export async function startAzurite(): Promise<Azurite> {
  const require = createRequire(import.meta.url);
  const main = path.join(path.dirname(require.resolve('azurite/package.json')), 'dist/src/blob/main.js');
  const child: ChildProcess = spawn(
    process.execPath,
    [main, '--blobHost', '127.0.0.1', '--blobPort', '0', '--inMemoryPersistence', '--extentMemoryLimit', '256', '--silent', '--skipApiVersionCheck', '--disableTelemetry'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Azurite did not start:\n${out}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const m = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Azurite exited with ${code}:\n${out}`));
    });
  });
  const connectionString = (key = AZURITE_KEY): string =>
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${key};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
  const service = BlobServiceClient.fromConnectionString(connectionString());
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    port,
    connectionString,
    container: (name) => service.getContainerClient(name),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
