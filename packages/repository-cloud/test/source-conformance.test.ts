/**
 * Every object-store source through the repository-source conformance suite (@tritium/core/testing),
 * each against a real server on 127.0.0.1: S3 against fauxqs (in-memory S3), Azure Blob against
 * Azurite. GCS has no emulator installable from npm (firebase-tools' Storage emulator needs a Java
 * rules runtime it downloads at first start), so its source runs only where STORAGE_EMULATOR_HOST
 * names a GCS JSON API server (fake-gcs-server, for one) with a bucket `conformance`; otherwise
 * that suite is skipped with the reason printed.
 */
import { afterAll, describe, it } from 'vitest';
import { repositorySourceConformanceSuite, type ConformanceSuite } from '@tritium/core/testing';
import { azureRepositorySource, gcsRepositorySource, s3RepositorySource } from '../src/index.ts';
import { startAzurite, startS3Emulator, S3_TEST_CREDENTIALS, type Azurite, type S3Emulator } from '../src/testing/index.ts';

function run(title: string, suite: ConformanceSuite): void {
  describe(`repository source conformance: ${title}`, () => {
    afterAll(() => suite.close());
    for (const c of suite.cases) it(c.name, () => c.run());
  });
}

let s3: S3Emulator | undefined;
run(
  'S3 (fauxqs)',
  repositorySourceConformanceSuite({
    async open(files) {
      const emulator = (s3 = await startS3Emulator());
      await emulator.createBucket('models');
      for (const [rel, bytes] of files) await emulator.put('models', `repo/${rel}`, bytes);
      return {
        source: s3RepositorySource(`s3://${emulator.hostPort}/models/repo`, { env: S3_TEST_CREDENTIALS }),
        write: (rel, bytes) => emulator.put('models', `repo/${rel}`, bytes),
        remove: (rel) => emulator.remove('models', `repo/${rel}`),
        dispose: () => emulator.stop(),
      };
    },
  }),
);

let azurite: Azurite | undefined;
run(
  'Azure Blob (Azurite)',
  repositorySourceConformanceSuite({
    async open(files) {
      const emulator = (azurite = await startAzurite());
      const container = emulator.container('models');
      await container.create();
      const write = async (rel: string, bytes: Uint8Array): Promise<void> => {
        await container.getBlockBlobClient(`repo/${rel}`).uploadData(bytes);
      };
      for (const [rel, bytes] of files) await write(rel, bytes);
      return {
        source: azureRepositorySource('as://devstoreaccount1/models/repo', { env: { AZURE_STORAGE_CONNECTION_STRING: emulator.connectionString() } }),
        write,
        remove: async (rel) => {
          await container.getBlockBlobClient(`repo/${rel}`).delete();
        },
        dispose: () => emulator.stop(),
      };
    },
  }),
);

const gcsHost = process.env.STORAGE_EMULATOR_HOST;
if (gcsHost) {
  run(
    `GCS (${gcsHost})`,
    repositorySourceConformanceSuite({
      async open(files) {
        const { Storage } = await import('@google-cloud/storage');
        const bucket = new Storage({ apiEndpoint: gcsHost, projectId: 'conformance' }).bucket('conformance');
        const prefix = `repo-${process.pid}-${Date.now()}/`;
        const write = async (rel: string, bytes: Uint8Array): Promise<void> => {
          await bucket.file(`${prefix}${rel}`).save(Buffer.from(bytes), { resumable: false });
        };
        for (const [rel, bytes] of files) await write(rel, bytes);
        return {
          source: gcsRepositorySource(`gs://conformance/${prefix.slice(0, -1)}`),
          write,
          remove: async (rel) => {
            await bucket.file(`${prefix}${rel}`).delete();
          },
          dispose: async () => {
            await bucket.deleteFiles({ prefix });
          },
        };
      },
    }),
  );
} else {
  describe('repository source conformance: GCS', () => {
    it.skip('needs a GCS JSON API server: none installs from npm; set STORAGE_EMULATOR_HOST to run it', () => {});
  });
  console.warn(
    'skipped: GCS repository source conformance: no GCS emulator installs from npm (firebase-tools needs a Java rules runtime it downloads); set STORAGE_EMULATOR_HOST to a GCS JSON API server with a bucket `conformance` to run it',
  );
}

afterAll(async () => {
  await s3?.stop().catch(() => undefined);
  await azurite?.stop();
});
