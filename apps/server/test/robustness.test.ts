/**
 * Bounded fuzzing (random and mutated HTTP bodies and gRPC messages: every request answered, no
 * crash, memory bounded), then graceful shutdown (readiness drops, new requests refused,
 * in-flight ones finish).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Client, credentials, type ServiceError } from '@grpc/grpc-js';
import { InferInput } from '@tritium/client';
import type { InferRequest } from '@tritium/core';
import { encodeInferRequest } from '@tritium/client/proto';
import { startTestServer, type TestServer } from './support/start-server.ts';

let s: TestServer;
/** Resolves when a request for `slow` reaches the InferenceServer (so it is truly in flight). */
let slowArrived: () => void = () => {};
const arrived = new Promise<void>((resolve) => (slowArrived = resolve));

beforeAll(async () => {
  s = await startTestServer({ httpMaxInputSize: 1 << 20 }, undefined, ['simple', 'strings', 'slow'], undefined, (api) =>
    new Proxy(api, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key === 'infer') {
          return (r: InferRequest) => {
            if (r.model === 'slow') slowArrived();
            return target.infer(r);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }),
  );
});
afterAll(async () => {
  await s?.close();
});

const FUZZ_MS = 1500;
/** At least this many requests each, however slow the host (the time bound alone could send few). */
const MIN_SENT = 40;

const validJson = JSON.stringify({
  id: 'a',
  parameters: { priority: 1 },
  inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP32', data: [1, 2] }],
  outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
});
const validGrpc = encodeInferRequest({
  model_name: 'simple',
  model_version: '',
  id: 'x',
  parameters: { timeout: 5 },
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], parameters: {} }],
  outputs: [{ name: 'OUTPUT0', parameters: {} }],
  raw_input_contents: [new Uint8Array(8)],
});

function mutate(base: Buffer, rnd: fc.RandomGenerator | (() => number)): Buffer {
  const r = rnd as () => number;
  const out = Buffer.from(base);
  const edits = 1 + Math.floor(r() * 4);
  for (let i = 0; i < edits; i++) out[Math.floor(r() * out.length)] = Math.floor(r() * 256);
  return r() < 0.3 ? out.subarray(0, Math.floor(r() * out.length)) : out;
}

/** A small deterministic PRNG so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

describe('fuzzing', () => {
  it('answers every random or mutated HTTP request', async () => {
    const rnd = prng(1234);
    const paths = ['/v2/models/simple/infer', '/v2/models/strings/infer', '/v2/repository/index', '/v2/logging', '/v2/trace/setting', '/v2/models/simple/versions/1/infer'];
    const heapBefore = process.memoryUsage().rss;
    const deadline = Date.now() + FUZZ_MS;
    let sent = 0;
    const statuses = new Set<number>();
    while (Date.now() < deadline || sent < MIN_SENT) {
      const batch = Array.from({ length: 8 }, () => {
        const path = paths[Math.floor(rnd() * paths.length)]!;
        const body = rnd() < 0.5 ? mutate(Buffer.from(validJson), rnd) : Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256)));
        const headers: Record<string, string | number> = {};
        if (rnd() < 0.3) headers['inference-header-content-length'] = Math.floor(rnd() * (body.length + 4));
        if (rnd() < 0.1) headers['content-encoding'] = 'gzip';
        return s.http.request('POST', path, body, headers);
      });
      for (const res of await Promise.all(batch)) {
        statuses.add(res.status);
        expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(600);
        expect(res.status).not.toBe(500);
        if (res.status !== 200) expect(typeof JSON.parse(res.body.toString()).error).toBe('string');
      }
      sent += batch.length;
    }
    expect(sent).toBeGreaterThanOrEqual(MIN_SENT);
    expect(statuses.has(400)).toBe(true);
    expect(await s.http.isServerLive()).toBe(true);
    expect(process.memoryUsage().rss - heapBefore).toBeLessThan(512 * 1024 * 1024);
  });

  it('answers every random or mutated gRPC message, unary and streaming', async () => {
    const rnd = prng(99);
    const client = new Client(s.grpcUrl, credentials.createInsecure());
    const methods = ['ModelInfer', 'ModelMetadata', 'ModelConfig', 'RepositoryIndex', 'LogSettings', 'TraceSetting', 'SystemSharedMemoryRegister'];
    const unary = (method: string, payload: Buffer) =>
      new Promise<number>((resolve) =>
        client.makeUnaryRequest(
          `/inference.GRPCInferenceService/${method}`,
          (b: Buffer) => b,
          (b: Buffer) => b,
          payload,
          { deadline: Date.now() + 10_000 },
          (err: ServiceError | null) => resolve(err ? err.code : 0),
        ),
      );
    const deadline = Date.now() + FUZZ_MS;
    let sent = 0;
    const codes = new Set<number>();
    while (Date.now() < deadline || sent < MIN_SENT) {
      const batch = Array.from({ length: 8 }, () => {
        const method = methods[Math.floor(rnd() * methods.length)]!;
        const payload = rnd() < 0.6 ? mutate(validGrpc, rnd) : Buffer.from(Array.from({ length: Math.floor(rnd() * 48) }, () => Math.floor(rnd() * 256)));
        return unary(method, payload);
      });
      for (const code of await Promise.all(batch)) {
        codes.add(code);
        expect([13, 4]).not.toContain(code); // never INTERNAL, never a deadline
      }
      sent += batch.length;
    }
    // A stream with garbage messages: each gets an error_message or a response, then the stream ends.
    const stream = client.makeBidiStreamRequest('/inference.GRPCInferenceService/ModelStreamInfer', (b: Buffer) => b, (b: Buffer) => b);
    let answers = 0;
    const ended = new Promise<void>((resolve) => {
      stream.on('data', () => answers++);
      stream.on('status', () => resolve());
      stream.on('error', () => resolve());
    });
    for (let i = 0; i < 50; i++) stream.write(mutate(validGrpc, rnd));
    stream.end();
    await ended;
    client.close();
    expect(answers).toBe(50);
    expect(sent).toBeGreaterThanOrEqual(MIN_SENT);
    expect(codes.has(3)).toBe(true);
    expect(await s.grpc.isServerLive()).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('drops readiness, refuses new requests, finishes in-flight ones, then closes', async () => {
    const slow = s.http.infer('slow', [new InferInput('INPUT0', [2], 'FP32').setData(Float32Array.of(4, 5))], { parameters: { fault: 'delay:2000' } });
    await arrived;
    const stopping = s.server.stop();
    expect(await s.http.isServerReady()).toBe(false);
    expect(await s.grpc.isServerReady()).toBe(false);
    const refused = await s.http.infer('simple', [new InferInput('INPUT0', [1, 1], 'FP32').setData(Float32Array.of(1))]).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect([(refused as { status?: string }).status, (refused as Error).message]).toEqual([
      '503',
      'Server is stopping: new inference requests are refused',
    ]);
    const done = await slow;
    expect(Array.from(done.asTypedArray('OUTPUT0', 'FP32'))).toEqual([4, 5]);
    await stopping;
    const after = await s.http.isServerLive().catch((e: Error) => e);
    expect(after).toBeInstanceOf(Error);
  });
});
