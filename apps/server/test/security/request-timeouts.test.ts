/**
 * A request's `timeout` parameter (microseconds, Triton's uint64) past what one JS timer can wait
 * (2^31-1 ms, about 24.8 days) means "wait that long", not "expired on arrival".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, undefined, ['simple']);
});
afterAll(async () => {
  await s?.close();
});

const input = (): InferInput => new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(3, 4));

describe('request timeouts past 24.8 days', () => {
  it('HTTP: timeout 2^53-1 us answers the request, not 503 Request timeout expired at once', async () => {
    const res = await fetch(`http://${s.httpUrl}/v2/models/simple/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parameters: { timeout: Number.MAX_SAFE_INTEGER }, inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [3, 4] }] }),
    });
    expect(await res.json()).toMatchObject({ outputs: [{ name: 'OUTPUT0', data: [3, 4] }] });
    expect(res.status).toBe(200);
  });

  it('gRPC: timeout 2^64-1 us answers the request', async () => {
    const r = await s.grpc.infer('simple', [input()], { parameters: { timeout: 18446744073709551615n } });
    expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([3, 4]);
  });

  it('the HTTP client timeout option of exactly 2^31 ms (one past what setTimeout takes) answers the request', async () => {
    const r = await s.http.infer('simple', [input()], { timeout: 2_147_483_648_000 });
    expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([3, 4]);
  });
});
