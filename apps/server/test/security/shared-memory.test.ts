/**
 * With --allow-client-shm, a key naming a symlink in /dev/shm cannot read or write the link's
 * target: no link is followed, only regular files in /dev/shm, keys are one name, and bounds hold
 * against the file's real size at registration and at every use.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferRequestedOutput, InferenceServerException } from '@tritium/client';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
let outside: string;
const tag = `tritium-shmsec-${process.pid}`;
const shm = (name: string) => `/dev/shm/${tag}-${name}`;
const key = (name: string) => `/${tag}-${name}`;

beforeAll(async () => {
  s = await startTestServer({ allowClientShm: true }, undefined, ['simple']);
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tritium-shm-target-'));
});
afterAll(async () => {
  await s?.close();
  for (const f of fs.readdirSync('/dev/shm')) if (f.startsWith(tag)) fs.rmSync(path.join('/dev/shm', f), { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

async function refused(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

describe('symlink attack', () => {
  it('a key naming a symlink to a file elsewhere is refused (HTTP and gRPC); the target is neither read nor written', async () => {
    const target = path.join(outside, 'secret');
    const secret = Buffer.alloc(64, 0x41);
    Float32Array.of(1234.5, 6789.25).forEach((v, i) => secret.writeFloatLE(v, i * 4));
    fs.writeFileSync(target, secret);
    fs.symlinkSync(target, shm('link'));

    const http = await refused(s.http.registerSystemSharedMemory('stolen', key('link'), 64));
    expect(http.status).toBe('400');
    expect(http.message).toBe(`Unable to open shared memory region: '${key('link')}': it is a symbolic link (links are not followed)`);
    const grpc = await refused(s.grpc.registerSystemSharedMemory('stolen', key('link'), 64));
    expect(grpc.status).toBe('StatusCode.INVALID_ARGUMENT');
    expect(await s.http.getSystemSharedMemoryStatus()).toEqual([]);

    // With no region registered, an infer naming it can neither read nor write the target.
    const input = new InferInput('INPUT0', [1, 2], 'FP32').setSharedMemory('stolen', 8, 0);
    const output = new InferRequestedOutput('OUTPUT0').setSharedMemory('stolen', 8, 32);
    await refused(s.http.infer('simple', [input], { outputs: [output] }));
    expect(fs.readFileSync(target)).toEqual(secret);
  });

  it('a link to another shm object is refused too (no link is followed at all)', async () => {
    fs.writeFileSync(shm('real'), Buffer.alloc(16));
    fs.symlinkSync(shm('real'), shm('alias'));
    const e = await refused(s.grpc.registerSystemSharedMemory('alias', key('alias'), 16));
    expect(e.message).toContain('symbolic link');
    await s.grpc.registerSystemSharedMemory('real', key('real'), 16);
    await s.grpc.unregisterSystemSharedMemory('real');
  });

  it('only regular files: a folder or a FIFO under /dev/shm is refused without blocking', async () => {
    fs.mkdirSync(shm('dir'));
    const dir = await refused(s.http.registerSystemSharedMemory('d', key('dir'), 0));
    expect(dir.message).toContain(`Unable to open shared memory region: '${key('dir')}'`);
    execFileSync('mkfifo', [shm('fifo')]);
    const fifo = await refused(s.http.registerSystemSharedMemory('f', key('fifo'), 0));
    expect(fifo.message).toContain('not a regular file');
    expect(await s.http.isServerLive()).toBe(true);
  });
});

describe('keys', () => {
  it.each(['/../etc/passwd', '../etc/passwd', '//x', '/a/b', '/..', '/.', '/', '', `/${'k'.repeat(256)}`, '/a\u0000b'])(
    'key %j is refused INVALID_ARG naming the key',
    async (bad) => {
      const e = await refused(s.http.registerSystemSharedMemory('r', bad, 0));
      expect(e.status).toBe('400');
      expect(e.message).toContain("cannot register shared memory region 'r' - invalid shm key");
    },
  );
  it('a key without the leading slash names the same object (shm_open accepts both)', async () => {
    fs.writeFileSync(shm('noslash'), Buffer.alloc(8));
    await s.http.registerSystemSharedMemory('ns', `${tag}-noslash`, 8);
    await s.http.unregisterSystemSharedMemory('ns');
  });
});

describe('bounds against the real file size', () => {
  it('offset + byte_size past the end of the file is refused at registration', async () => {
    fs.writeFileSync(shm('small'), Buffer.alloc(32));
    const e = await refused(s.http.registerSystemSharedMemory('small', key('small'), 32, 8));
    expect(e.message).toContain('exceeds the size 32');
  });

  it('a file truncated after registration is caught at each use, for inputs and outputs', async () => {
    const file = shm('shrink');
    const bytes = Buffer.alloc(64);
    Float32Array.of(3, 4).forEach((v, i) => bytes.writeFloatLE(v, 8 + i * 4));
    fs.writeFileSync(file, bytes);
    await s.http.registerSystemSharedMemory('shrink', key('shrink'), 64);
    const input = () => new InferInput('INPUT0', [1, 2], 'FP32').setSharedMemory('shrink', 8, 8);
    const output = () => new InferRequestedOutput('OUTPUT0').setSharedMemory('shrink', 8, 40);
    const ok = await s.http.infer('simple', [input()], { outputs: [output()] });
    expect(ok.output('OUTPUT0')).toBeDefined();
    const written = fs.readFileSync(file);
    expect([written.readFloatLE(40), written.readFloatLE(44)]).toEqual([3, 4]);

    fs.truncateSync(file, 12);
    const inErr = await refused(s.http.infer('simple', [input()]));
    expect(inErr.message).toContain("shared memory region 'shrink'");
    expect(inErr.message).toContain('is now 12 bytes');
    fs.truncateSync(file, 24);
    const outErr = await refused(s.grpc.infer('simple', [input()], { outputs: [output()] }));
    expect(outErr.status).toBe('StatusCode.INVALID_ARGUMENT');
    expect(outErr.message).toContain('is now 24 bytes');
    // The failed write did not grow the file.
    expect(fs.statSync(file).size).toBe(24);
    await s.http.unregisterSystemSharedMemory('shrink');
  });
});

describe('input byte size against the tensor', () => {
  it('a fixed-size input whose shared_memory_byte_size is not what its shape takes is refused before the region is read', async () => {
    const file = shm('sized');
    const bytes = Buffer.alloc(1 << 20);
    Float32Array.of(3, 4).forEach((v, i) => bytes.writeFloatLE(v, i * 4));
    fs.writeFileSync(file, bytes);
    await s.http.registerSystemSharedMemory('sized', key('sized'), 1 << 20);
    // The file shrinks under the region: a read of the claimed size would fail on the missing bytes,
    // so the answer shows whether the size was checked before reading.
    fs.truncateSync(file, 16);
    const big = () => [new InferInput('INPUT0', [1, 2], 'FP32').setSharedMemory('sized', 1 << 20, 0)];
    const message = `input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 8, got ${1 << 20}`;
    const http = await refused(s.http.infer('simple', big()));
    expect([http.status, http.message]).toEqual(['400', message]);
    const grpc = await refused(s.grpc.infer('simple', big()));
    expect([grpc.status, grpc.message]).toEqual(['StatusCode.INVALID_ARGUMENT', message]);
    const ok = await s.grpc.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setSharedMemory('sized', 8, 0)]);
    expect(Array.from(ok.asTypedArray('OUTPUT0', 'FP32'))).toEqual([3, 4]);
    await s.http.unregisterSystemSharedMemory('sized');
  });
});

describe('register request fields', () => {
  // A registration a test makes (a bad one too, should it be accepted) does not outlive it.
  afterEach(() => s.http.unregisterSystemSharedMemory());
  const register = (body: unknown) =>
    fetch(`http://${s.httpUrl}/v2/systemsharedmemory/region/fields/register`, { method: 'POST', body: JSON.stringify(body) }).then(async (res) => ({
      status: res.status,
      error: ((await res.json().catch(() => ({}))) as { error?: string }).error ?? '',
    }));

  it('an offset that is not a non-negative integer is refused 400 naming it (a string offset is never read as 0)', async () => {
    fs.writeFileSync(shm('fields'), Buffer.alloc(64));
    for (const [offset, shown] of [['16', '"16"'], [null, 'null'], [1.5, '1.5'], [-8, '-8'], [true, 'true']] as const) {
      const r = await register({ key: key('fields'), offset, byte_size: 16 });
      expect(r).toEqual({ status: 400, error: `cannot register shared memory region 'fields': 'offset' must be a non-negative integer, got ${shown}` });
    }
    expect(await s.http.getSystemSharedMemoryStatus()).toEqual([]);
  });

  it('so is such a byte_size, over HTTP and gRPC', async () => {
    fs.writeFileSync(shm('fields'), Buffer.alloc(64));
    for (const [byteSize, shown] of [['16', '"16"'], [-1, '-1'], [2.5, '2.5']] as const) {
      const r = await register({ key: key('fields'), byte_size: byteSize });
      expect(r).toEqual({ status: 400, error: `cannot register shared memory region 'fields': 'byte_size' must be a non-negative integer, got ${shown}` });
    }
    const e = await refused(s.grpc.registerSystemSharedMemory('fields', key('fields'), 2 ** 60));
    expect(e.status).toBe('StatusCode.INVALID_ARGUMENT');
    expect(e.message).toContain("'byte_size' must be a non-negative integer");
  });

  it('a valid offset and an absent one (0) still register', async () => {
    fs.writeFileSync(shm('fields'), Buffer.alloc(64));
    expect(await register({ key: key('fields'), offset: 16, byte_size: 48 })).toEqual({ status: 200, error: '' });
    expect(await s.http.getSystemSharedMemoryStatus('fields')).toEqual([{ name: 'fields', key: key('fields'), offset: 16, byte_size: 48 }]);
    await s.http.unregisterSystemSharedMemory('fields');
    expect(await register({ key: key('fields'), byte_size: 64 })).toEqual({ status: 200, error: '' });
    await s.http.unregisterSystemSharedMemory('fields');
  });
});

describe('registration count', () => {
  it('at most 4096 regions at once: the next is refused UNAVAILABLE (each held a file descriptor until the process ran out)', async () => {
    fs.writeFileSync(shm('many'), Buffer.alloc(16));
    const names = Array.from({ length: 4096 }, (_, i) => `r${i}`);
    for (let i = 0; i < names.length; i += 512) {
      await Promise.all(names.slice(i, i + 512).map((n) => s.grpc.registerSystemSharedMemory(n, key('many'), 16)));
    }
    const e = await refused(s.grpc.registerSystemSharedMemory('one_more', key('many'), 16));
    expect(e.status).toBe('StatusCode.UNAVAILABLE');
    expect(e.message).toContain("cannot register shared memory region 'one_more': 4096 regions are registered");
    await s.http.unregisterSystemSharedMemory();
    await s.grpc.registerSystemSharedMemory('one_more', key('many'), 16);
    await s.http.unregisterSystemSharedMemory();
  });
});
