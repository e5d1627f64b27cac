/**
 * Model repositories in object storage, end to end: core's InferenceServer with the python-like
 * backend over a real S3-compatible server (fauxqs) and Azure's Blob emulator (Azurite), both on
 * 127.0.0.1. Poll and explicit modes, downloads only of what changed, Triton's uniqueness rule
 * across a local and an S3 repository, and bad input (hostile keys, a cut connection, a missing
 * bucket, refused credentials (s3rver and Azurite check them), a dead endpoint) that fails with the URL named while loaded models keep serving.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, InferenceServer, type Logger } from '@tritium/core';
import { type RepositorySource } from '@tritium/core/repository';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { azureRepositorySource, s3RepositorySource } from '@tritium/repository-cloud';
import {
  S3_TEST_CREDENTIALS,
  startAzurite,
  startCredentialCheckingS3,
  startCuttingProxy,
  startS3Emulator,
  type Azurite,
  type S3Emulator,
} from '@tritium/repository-cloud/testing';

const CONFIG = `backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
`;

/** A model.ts answering Y = value (plus X), so a response shows which file content is serving. */
const modelTs = (value: number): string => `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const x = (getInputTensorByName(r, 'X')!.data as Int32Array)[0]!;
      return new InferenceResponse([new Tensor('Y', Int32Array.of(${value} + x), [1])]);
    });
  }
}
`;

/** Counts the files a source downloads (the real source underneath). */
function counting(source: RepositorySource): RepositorySource & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    url: source.url,
    list: (dir, o) => source.list(dir, o),
    stat: (p, o) => source.stat(p, o),
    fetch: (entry, o) => {
      fetched.push(entry.path);
      return source.fetch(entry, o);
    },
    close: () => source.close?.() ?? Promise.resolve(),
    fetched,
  };
}

function memoryLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, error: (m) => lines.push(`E ${m}`), warn: (m) => lines.push(`W ${m}`), info: (m) => lines.push(`I ${m}`), verbose: () => {} };
}

async function y(server: InferenceServer, model: string, version?: number): Promise<number> {
  const res = await server.infer({ id: 'r', model, version, inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: new Uint8Array(4) }] });
  return new Int32Array(res.outputs[0]!.data.slice().buffer)[0]!;
}

const env = { ...S3_TEST_CREDENTIALS };
let s3: S3Emulator;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'tritium-objstore-'));

beforeAll(async () => {
  s3 = await startS3Emulator();
  await s3.createBucket('models');
}, 60_000);
afterAll(async () => {
  await s3?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

async function putModel(prefix: string, name: string, versions: Record<number, number>, config = CONFIG): Promise<void> {
  await s3.put('models', `${prefix}${name}/config.pbtxt`, config);
  for (const [v, value] of Object.entries(versions)) await s3.put('models', `${prefix}${name}/${v}/model.ts`, modelTs(value));
}

describe('S3 repository, poll mode', () => {
  it('serves a new version, a changed file and an edited config, downloading only what changed', async () => {
    await putModel('poll/', 'm', { 1: 100 });
    const source = counting(s3RepositorySource(`s3://${s3.hostPort}/models/poll`, { env }));
    const log = memoryLog();
    const server = new InferenceServer({
      repositories: [source],
      backends: [pythonLikeBackend()],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
      repositoryCacheDir: path.join(tmp, 'cache-poll'),
      log,
    });
    try {
      await server.start();
      expect(await y(server, 'm')).toBe(100);
      expect(source.fetched.sort()).toEqual(['m/1/model.ts', 'm/config.pbtxt']);

      // Nothing changed: nothing downloaded, nothing reloaded.
      source.fetched.length = 0;
      const loadsBefore = log.lines.filter((l) => l.includes('loading: m:')).length;
      expect(await server.pollNow()).toEqual([]);
      expect(source.fetched).toEqual([]);
      expect(log.lines.filter((l) => l.includes('loading: m:')).length).toBe(loadsBefore);

      // A new version folder: version 2 serves (latest policy), only its file is fetched.
      await s3.put('models', 'poll/m/2/model.ts', modelTs(200));
      expect(await server.pollNow()).toEqual([]);
      expect(await y(server, 'm')).toBe(200);
      expect(source.fetched).toEqual(['m/2/model.ts']);

      // A changed file (new ETag) in the serving version.
      source.fetched.length = 0;
      await s3.put('models', 'poll/m/2/model.ts', modelTs(300));
      expect(await server.pollNow()).toEqual([]);
      expect(await y(server, 'm')).toBe(300);
      expect(source.fetched).toEqual(['m/2/model.ts']);

      // An edited config: serve version 1 only.
      source.fetched.length = 0;
      await s3.put('models', 'poll/m/config.pbtxt', `${CONFIG}version_policy: { specific: { versions: [ 1 ] } }\n`);
      expect(await server.pollNow()).toEqual([]);
      expect(await y(server, 'm')).toBe(100);
      expect(source.fetched).toEqual(['m/config.pbtxt']);

      // A removed model folder unloads.
      for (const key of ['poll/m/config.pbtxt', 'poll/m/1/model.ts', 'poll/m/2/model.ts']) await s3.remove('models', key);
      await server.pollNow();
      await expect(y(server, 'm')).rejects.toThrow(/unavailable|not found|unknown/i);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('a restart with a kept cache folder downloads nothing that did not change', async () => {
    await putModel('restart/', 'r', { 1: 7 });
    const cache = path.join(tmp, 'cache-restart');
    for (const expected of [['r/1/model.ts', 'r/config.pbtxt'], []]) {
      const source = counting(s3RepositorySource(`s3://${s3.hostPort}/models/restart`, { env }));
      const server = new InferenceServer({ repositories: [source], backends: [pythonLikeBackend()], repositoryCacheDir: cache });
      try {
        await server.start();
        expect(await y(server, 'r')).toBe(7);
        expect(source.fetched.sort()).toEqual(expected);
      } finally {
        await server.stop();
      }
    }
    // The default cache is a private temporary folder, removed at stop.
    const before = new Set(readdirSync(os.tmpdir()).filter((n) => n.startsWith('tritium-repository-cache-')));
    const server = new InferenceServer({ repositories: [s3RepositorySource(`s3://${s3.hostPort}/models/restart`, { env })], backends: [pythonLikeBackend()] });
    await server.start();
    const made = readdirSync(os.tmpdir()).filter((n) => n.startsWith('tritium-repository-cache-') && !before.has(n));
    expect(made).toHaveLength(1);
    await server.stop();
    expect(existsSync(path.join(os.tmpdir(), made[0]!))).toBe(false);
  }, 120_000);
});

describe('S3 repository, explicit mode', () => {
  it('loads on request and picks up a changed file on the next load', async () => {
    await putModel('explicit/', 'e', { 1: 10 });
    const source = counting(s3RepositorySource(`s3://${s3.hostPort}/models/explicit`, { env }));
    const server = new InferenceServer({
      repositories: [source],
      backends: [pythonLikeBackend()],
      modelControlMode: 'explicit',
      repositoryCacheDir: path.join(tmp, 'cache-explicit'),
    });
    try {
      await server.start();
      expect(source.fetched).toEqual([]);
      await server.loadModel('e');
      expect(await y(server, 'e')).toBe(10);
      await s3.put('models', 'explicit/e/1/model.ts', modelTs(11));
      source.fetched.length = 0;
      await server.loadModel('e');
      expect(await y(server, 'e')).toBe(11);
      expect(source.fetched).toEqual(['e/1/model.ts']);
      await expect(server.loadModel('absent')).rejects.toThrow("failed to poll model 'absent': model not found in any model repository.");
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('local and S3 repositories together', () => {
  it("applies Triton's uniqueness rule across them", async () => {
    await putModel('mixed/', 'twice', { 1: 1 });
    await putModel('mixed/', 'remote_only', { 1: 2 });
    const local = path.join(tmp, 'local-repo');
    for (const name of ['twice', 'local_only']) {
      mkdirSync(path.join(local, name, '1'), { recursive: true });
      writeFileSync(path.join(local, name, 'config.pbtxt'), CONFIG);
      writeFileSync(path.join(local, name, '1', 'model.ts'), modelTs(3));
    }
    const server = new InferenceServer({
      repositories: [local, s3RepositorySource(`s3://${s3.hostPort}/models/mixed`, { env })],
      backends: [pythonLikeBackend()],
      exitOnError: false,
      repositoryCacheDir: path.join(tmp, 'cache-mixed'),
    });
    try {
      await server.start();
      expect(await y(server, 'remote_only')).toBe(2);
      expect(await y(server, 'local_only')).toBe(3);
      await expect(y(server, 'twice')).rejects.toThrow();
      const index = await server.repositoryIndex();
      expect(index.find((e) => e.name === 'twice')).toMatchObject({ state: 'UNAVAILABLE', reason: 'model appears in two or more repositories' });
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('bad input keeps the loaded models serving', () => {
  it('refuses keys with .. or an empty segment, naming the URL; nothing is written outside the cache', async () => {
    await putModel('hostile/', 'h', { 1: 5 });
    const cache = path.join(tmp, 'cache-hostile');
    const url = `s3://${s3.hostPort}/models/hostile`;
    const server = new InferenceServer({
      repositories: [s3RepositorySource(url, { env })],
      backends: [pythonLikeBackend()],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
      repositoryCacheDir: cache,
    });
    try {
      await server.start();
      for (const key of ['hostile/h/1/../../../../../escaped.ts', 'hostile/h//etc/escaped.ts']) {
        await s3.put('models', key, 'export default 1;');
        const failures = await server.pollNow();
        expect(failures.join('\n')).toContain(`refusing object`);
        expect(failures.join('\n')).toContain(url);
        expect(await y(server, 'h')).toBe(5);
        await s3.remove('models', key);
      }
      const escaped = (dir: string): boolean => readdirSync(dir, { recursive: true }).some((n) => String(n).includes('escaped'));
      expect(escaped(tmp)).toBe(false);
      expect(await server.pollNow()).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('a connection cut mid-download fails the poll, leaves no partial version, and the next poll completes', async () => {
    await putModel('cut/', 'c', { 1: 1 });
    const proxy = await startCuttingProxy(s3.port);
    const cache = path.join(tmp, 'cache-cut');
    const url = `s3://127.0.0.1:${proxy.port}/models/cut`;
    const server = new InferenceServer({
      repositories: [s3RepositorySource(url, { env })],
      backends: [pythonLikeBackend()],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
      repositoryCacheDir: cache,
    });
    try {
      await server.start();
      // Version 2 with a 3 MiB weights file; the proxy cuts each response after 1 MiB.
      await s3.put('models', 'cut/c/2/model.ts', modelTs(2));
      await s3.put('models', 'cut/c/2/weights.bin', new Uint8Array(3 << 20).fill(7));
      proxy.cutAfter(1 << 20);
      const failures = await server.pollNow();
      expect(proxy.cuts).toBeGreaterThan(0);
      expect(failures.join('\n')).toMatch(new RegExp(`failed to download '${url.replace(/[.]/g, '\\.')}/c/2/weights\\.bin'`));
      expect(await y(server, 'c')).toBe(1);
      const versionDirs = readdirSync(cache, { recursive: true }).map(String).filter((p) => /models\/c\/2$/.test(p));
      expect(versionDirs).toEqual([]);
      proxy.cutAfter(undefined);
      expect(await server.pollNow()).toEqual([]);
      expect(await y(server, 'c')).toBe(2);
    } finally {
      await server.stop();
      await proxy.close();
    }
  }, 120_000);

  it('an unreachable endpoint fails the poll naming the URL and unloads nothing', async () => {
    await putModel('dead/', 'd', { 1: 4 });
    const proxy = await startCuttingProxy(s3.port);
    const url = `s3://127.0.0.1:${proxy.port}/models/dead`;
    const server = new InferenceServer({
      repositories: [s3RepositorySource(url, { env })],
      backends: [pythonLikeBackend()],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
      repositoryCacheDir: path.join(tmp, 'cache-dead'),
    });
    try {
      await server.start();
      await proxy.close();
      const failures = await server.pollNow();
      expect(failures.join('\n')).toContain(`failed to list ${url}`);
      expect(await y(server, 'd')).toBe(4);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('refused S3 credentials fail start naming the URL, never the secret (s3rver checks access keys)', async () => {
    const strict = await startCredentialCheckingS3(['models']);
    try {
      const url = `s3://${strict.hostPort}/models/repo`;
      // The right key pair lists the (empty) repository.
      expect(await s3RepositorySource(url, { env: strict.credentials }).list('')).toEqual([]);
      const secret = 'a-secret-that-must-never-be-printed';
      const server = new InferenceServer({
        repositories: [s3RepositorySource(url, { env: { AWS_ACCESS_KEY_ID: 'NOT-A-KNOWN-KEY', AWS_SECRET_ACCESS_KEY: secret } })],
        backends: [pythonLikeBackend()],
      });
      const err = (await server.start().then(
        () => undefined,
        (e: unknown) => e,
      )) as Error;
      expect(err.message).toContain(`failed to list ${url}: InvalidAccessKeyId`);
      expect(err.message).not.toContain(secret);
    } finally {
      await strict.stop();
    }
  }, 60_000);

  it('a missing bucket fails start naming the URL', async () => {
    const url = `s3://${s3.hostPort}/no-such-bucket/repo`;
    const server = new InferenceServer({ repositories: [s3RepositorySource(url, { env })], backends: [pythonLikeBackend()] });
    const err = await server.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(InferError.is(err)).toBe(true);
    expect((err as Error).message).toContain(`failed to list ${url}: NoSuchBucket`);
  }, 60_000);
});

describe('Azure Blob repository (Azurite)', () => {
  let azurite: Azurite;
  beforeAll(async () => {
    azurite = await startAzurite();
    const container = azurite.container('models');
    await container.create();
    const upload = (name: string, text: string): Promise<unknown> => container.getBlockBlobClient(name).upload(text, Buffer.byteLength(text));
    await upload('repo/a/config.pbtxt', CONFIG);
    await upload('repo/a/1/model.ts', modelTs(40));
  }, 90_000);
  afterAll(async () => {
    await azurite?.stop();
  });

  it('serves a model and picks up a new version in poll mode', async () => {
    const source = counting(azureRepositorySource('as://devstoreaccount1/models/repo', { env: { AZURE_STORAGE_CONNECTION_STRING: azurite.connectionString() } }));
    const server = new InferenceServer({
      repositories: [source],
      backends: [pythonLikeBackend()],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
      repositoryCacheDir: path.join(tmp, 'cache-azure'),
    });
    try {
      await server.start();
      expect(await y(server, 'a')).toBe(40);
      source.fetched.length = 0;
      expect(await server.pollNow()).toEqual([]);
      expect(source.fetched).toEqual([]);
      const text = modelTs(41);
      await azurite.container('models').getBlockBlobClient('repo/a/2/model.ts').upload(text, text.length);
      expect(await server.pollNow()).toEqual([]);
      expect(await y(server, 'a')).toBe(41);
      expect(source.fetched).toEqual(['a/2/model.ts']);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('a wrong account key fails start naming the URL, never the key', async () => {
    const wrongKey = Buffer.from('not-the-right-key-for-this-account').toString('base64');
    const url = 'as://devstoreaccount1/models/repo';
    const server = new InferenceServer({
      repositories: [azureRepositorySource(url, { env: { AZURE_STORAGE_CONNECTION_STRING: azurite.connectionString(wrongKey) } })],
      backends: [pythonLikeBackend()],
    });
    const err = (await server.start().then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toContain(`failed to list ${url}`);
    expect(err.message).toMatch(/AuthorizationFailure|AuthenticationFailed|403/);
    expect(err.message).not.toContain(wrongKey);
  }, 60_000);
});
