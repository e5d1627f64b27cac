/**
 * A backend failure (INTERNAL: an ONNX Runtime error, here the fault backend failing to read a
 * file) is logged the same whichever protocol carried the request: HTTP, gRPC ModelInfer and
 * ModelStreamInfer. Client errors (INVALID_ARG) are not logged on any of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { startTestServer, type TestServer } from './support/start-server.ts';

const input = () => new InferInput('INPUT0', [1], 'FP32').setData(new Float32Array([1]));

describe('server faults are logged on every protocol', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({}, undefined, ['slow']);
  }, 60_000);
  afterAll(async () => s?.close());

  it('logs the backend error for HTTP, gRPC and gRPC streaming alike, and no client error', async () => {
    const missing = (p: string) => `/nonexistent/tritium-${process.pid}-${p}`;
    await expect(s.http.infer('slow', [input()], { parameters: { fault: `read:${missing('http')}` } })).rejects.toThrow(/cannot read/);
    await expect(s.grpc.infer('slow', [input()], { parameters: { fault: `read:${missing('grpc')}` } })).rejects.toThrow(/cannot read/);
    const done = new Promise<string>((resolve) => s.grpc.startStream((_r, error) => error && resolve(error.message)));
    s.grpc.asyncStreamInfer('slow', [input()], { parameters: { fault: `read:${missing('stream')}` } });
    expect(await done).toMatch(/cannot read/);
    await s.grpc.stopStream();
    await expect(s.grpc.infer('slow', [input()], { parameters: { fault: 'fail' } })).rejects.toThrow(/failed on purpose/);
    await expect(s.http.infer('slow', [input()], { parameters: { fault: 'fail' } })).rejects.toThrow(/failed on purpose/);
    const errors = s.logs().split('\n').filter((l) => l.startsWith('E'));
    for (const p of ['http', 'grpc', 'stream']) expect(errors.some((l) => l.includes(missing(p))), `${p} error logged`).toBe(true);
    expect(errors.find((l) => l.includes(missing('grpc')))).toContain('gRPC ModelInfer: ');
    expect(errors.some((l) => l.includes('failed on purpose'))).toBe(false);
  });
});
