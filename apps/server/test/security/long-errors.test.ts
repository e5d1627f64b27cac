/**
 * An error that echoes a huge value (a 200 KB model name, a 100,000-dim shape) is capped and marked
 * as cut: whole, it would travel in the grpc-message trailer past what HTTP/2 clients accept, the
 * call would never get its status and the channel's other calls would hang.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferenceServerException, GrpcInferenceServerClient } from '@tritium/client';
import { MAX_ERROR_MESSAGE_BYTES } from '../../src/protocol/status.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, undefined, ['simple', 'addsub']);
});
afterAll(async () => {
  await s?.close();
});

const HUGE_NAME = 'm'.repeat(200 * 1024);
const HUGE_SHAPE = new Array<number>(100_000).fill(1);

async function failure(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

function expectCut(message: string, start: string): void {
  expect(message.startsWith(start)).toBe(true);
  expect(Buffer.byteLength(message)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES + 100);
  expect(message).toMatch(/\[error message cut: \d+ of \d+ bytes shown\]$/);
}

describe('gRPC: long error messages on one channel', () => {
  it('a 200 KB model name gets its NOT_FOUND status, cut; a valid call on the same channel succeeds', async () => {
    const client = new GrpcInferenceServerClient(s.grpcUrl);
    try {
      const input = new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(1, 2));
      const calls = [
        client.infer(HUGE_NAME, [input], { clientTimeoutMs: 30_000 }),
        client.getModelMetadata(HUGE_NAME),
        client.isModelReady(HUGE_NAME),
        client.infer('simple', [input], { clientTimeoutMs: 30_000 }),
      ];
      const [infer, meta, ready, valid] = await Promise.allSettled(calls);
      const inferError = (infer as PromiseRejectedResult).reason as InferenceServerException;
      expect(inferError.status).toBe('StatusCode.NOT_FOUND');
      expectCut(inferError.message, "Request for unknown model: 'mmmm");
      expect(((meta as PromiseRejectedResult).reason as InferenceServerException).status).toBe('StatusCode.NOT_FOUND');
      expect((ready as PromiseFulfilledResult<boolean>).value).toBe(false);
      expect(valid.status).toBe('fulfilled');
      // And after the failures, the channel still serves.
      const again = await client.infer('simple', [input], { clientTimeoutMs: 30_000 });
      expect(Array.from(again.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2]);
    } finally {
      client.close();
    }
  });

  it('a 100,000-dim shape gets INVALID_ARGUMENT with the message cut; the channel keeps working', async () => {
    const client = new GrpcInferenceServerClient(s.grpcUrl);
    try {
      const bad = new InferInput('INPUT0', HUGE_SHAPE, 'INT32').setData(Int32Array.of(7));
      const e = await failure(client.infer('addsub', [bad, new InferInput('INPUT1', HUGE_SHAPE, 'INT32').setData(Int32Array.of(1))], { clientTimeoutMs: 30_000 }));
      expect(e.status).toBe('StatusCode.INVALID_ARGUMENT');
      expect(e.message).toContain('[error message cut:');
      expect(Buffer.byteLength(e.message)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES + 100);
      const ok = await client.isServerReady();
      expect(ok).toBe(true);
    } finally {
      client.close();
    }
  });

  it('streaming: a huge error goes in error_message, cut, and the stream keeps answering', async () => {
    const client = new GrpcInferenceServerClient(s.grpcUrl);
    const seen: { ok?: boolean; message?: string }[] = [];
    const two = new Promise<void>((resolve) => {
      client.startStream((result, error) => {
        seen.push(error ? { message: error.message } : { ok: !!result });
        if (seen.length === 2) resolve();
      });
    });
    const input = new InferInput('INPUT0', [1, 1], 'FP32').setData(Float32Array.of(3));
    client.asyncStreamInfer(HUGE_NAME, [input]);
    client.asyncStreamInfer('simple', [input]);
    await two;
    await client.stopStream();
    client.close();
    const error = seen.find((x) => x.message)!;
    expectCut(error.message!, "Request for unknown model: 'mmmm");
    expect(seen.some((x) => x.ok)).toBe(true);
  });
});

describe('HTTP: long error messages', () => {
  it('the error JSON is capped and marked as cut', async () => {
    const res = await s.http.request('POST', '/v2/logging', JSON.stringify({ [HUGE_NAME]: true }));
    expect(res.status).toBe(400);
    expectCut(JSON.parse(res.body.toString()).error, "Logging setting 'mmmm");
  });

  it('multi-byte characters are never split, and the marker counts bytes', async () => {
    const res = await s.http.request('POST', '/v2/logging', JSON.stringify({ ['é'.repeat(50_000)]: true }));
    const message = JSON.parse(res.body.toString()).error as string;
    expect(message).not.toContain('\uFFFD');
    expect(message).toMatch(/^Logging setting 'é+\.\.\. \[error message cut: \d+ of 100\d\d\d bytes shown\]$/);
  });
});
