/**
 * A model in a crash loop, seen by Triton's clients: while every instance is down, HTTP infer
 * answers 503 and gRPC UNAVAILABLE with the last crash cause (not 404 "unknown model"), the
 * repository index shows UNAVAILABLE with that cause, and the model serves again by itself once a
 * restart works. The fault model's createInstance fails while a marker file exists. With one
 * instance down and another healthy but busy, a request waits for the healthy one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { InferInput, InferenceServerException } from '@tritium/client';
import { faultBackend } from '@tritium/core/testing';
import { startTestServerWith, type TestServer } from './support/start-server.ts';

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-crash-loop-repo-'));
const marker = path.join(repo, 'broken');
const pairMarker = path.join(repo, 'pair-broken');
let s: TestServer;

beforeAll(async () => {
  mkdirSync(path.join(repo, 'looping', '1'), { recursive: true });
  writeFileSync(
    path.join(repo, 'looping', 'config.pbtxt'),
    `backend: "fault"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
parameters { key: "fault_on_start" value: { string_value: "fail-while:${marker}" } }
`,
  );
  mkdirSync(path.join(repo, 'pair', '1'), { recursive: true });
  writeFileSync(
    path.join(repo, 'pair', 'config.pbtxt'),
    `backend: "fault"
max_batch_size: 0
instance_group [ { count: 2, kind: KIND_CPU } ]
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
parameters { key: "fault_on_start" value: { string_value: "fail-while:${pairMarker}" } }
`,
  );
  s = await startTestServerWith({ modelRepositories: [repo] }, [faultBackend({ restart: { maxRestarts: 1, initialBackoffMs: 5, maxBackoffMs: 50 } })]);
});
afterAll(async () => {
  await s?.close();
  rmSync(repo, { recursive: true, force: true });
});


async function failure(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

it('answers 503 / UNAVAILABLE with the crash cause while down, shows it in the index, and recovers', async () => {
  writeFileSync(marker, '');
  try {
    const crash = await failure(s.http.infer('looping', [new InferInput('INPUT0', [1, 1], 'FP32').setData(Float32Array.of(1))], { parameters: { fault: 'exit' } }));
    expect(crash.status).toBe('500');
    await vi.waitFor(async () => expect((await s.http.getModelRepositoryIndex())[0]).toMatchObject({ name: 'looping', state: 'UNAVAILABLE' }), { timeout: 30_000 });
    const [entry] = await s.http.getModelRepositoryIndex();
    expect(entry.reason).toMatch(/crashed \d+ times in a row; last cause: createInstance failed on restart: fault backend: createInstance fails while /);

    const http = await failure(s.http.infer('looping', [new InferInput('INPUT0', [1, 1], 'FP32').setData(Float32Array.of(1))]));
    expect(http.status).toBe('503');
    expect(http.message).toMatch(/^model 'looping' version 1 is unavailable: model 'looping' instance 'looping_0' crashed \d+ times in a row; last cause: /);
    const grpc = await failure(s.grpc.infer('looping', [new InferInput('INPUT0', [1, 1], 'FP32').setData(Float32Array.of(1))]));
    expect(grpc.status).toBe('StatusCode.UNAVAILABLE');
    expect(grpc.message).toContain("model 'looping' version 1 is unavailable: ");
    expect((await fetch(`http://${s.httpUrl}/v2/models/looping/ready`)).status).toBe(400);
  } finally {
    rmSync(marker, { force: true });
  }
  await vi.waitFor(async () => expect((await s.http.getModelRepositoryIndex())[0]).toMatchObject({ state: 'READY' }), { timeout: 30_000 });
  const served = await s.http.infer('looping', [new InferInput('INPUT0', [1, 1], 'FP32').setData(Float32Array.of(1))]);
  expect([...served.asTypedArray('OUTPUT0', 'FP32')]).toEqual([1]);
});

it('sends a request to a busy healthy instance rather than to an idle one in a crash loop', async () => {
  const input = () => [new InferInput('INPUT0', [1], 'FP32').setData(Float32Array.of(7))];
  writeFileSync(pairMarker, '');
  try {
    // One of the two instances crashes and cannot restart while the marker exists.
    const crash = await failure(s.http.infer('pair', input(), { parameters: { fault: 'exit' } }));
    expect(crash.status).toBe('500');
    // The other keeps the model ready.
    expect(await s.http.isModelReady('pair')).toBe(true);
    // The healthy instance is busy with `slow` when `quick` arrives: `quick` must wait for it, not go
    // to the idle down instance (whose restart never comes: it would fail after the restart wait).
    const slow = s.http.infer('pair', input(), { parameters: { fault: 'delay:300' } });
    const quick = s.http.infer('pair', input());
    const [a, b] = await Promise.all([slow, quick]);
    expect([[...a.asTypedArray('OUTPUT0', 'FP32')], [...b.asTypedArray('OUTPUT0', 'FP32')]]).toEqual([[7], [7]]);
  } finally {
    rmSync(pairMarker, { force: true });
  }
}, 60_000);
