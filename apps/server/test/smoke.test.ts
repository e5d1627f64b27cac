import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferRequestedOutput } from '@tritium/client';
import { startTestServer, type TestServer } from './support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

describe('smoke', () => {
  it('infers over both protocols', async () => {
    const input = new InferInput('INPUT0', [1, 3], 'FP32').setData(Float32Array.of(1, 2, 3));
    const g = await s.grpc.infer('simple', [input]);
    expect(Array.from(g.asTypedArray('OUTPUT1', 'FP32'))).toEqual([2, 4, 6]);
    const h = await s.http.infer('simple', [input], { outputs: [new InferRequestedOutput('OUTPUT1', { binary: false })] });
    expect(Array.from(h.asTypedArray('OUTPUT1', 'FP32'))).toEqual([2, 4, 6]);
    expect(s.logs()).toMatch(/Started GRPCInferenceService at 127\.0\.0\.1:\d+/);
  });
});
