/**
 * `response_stats` in model statistics, as Triton's L0_response_statistics reads them: per response
 * index, the six durations (compute_infer, compute_output, success, fail, empty_response, cancel),
 * equal over HTTP and gRPC, for a decoupled model streamed over gRPC and a plain model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { startTestServer, type TestServer } from './support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ modelControlMode: 'explicit', loadModels: ['*'] }, undefined, ['simple', 'repeat']);
});
afterAll(async () => {
  await s?.close();
});

const KEYS = ['compute_infer', 'compute_output', 'success', 'fail', 'empty_response', 'cancel'];

/** response_stats over HTTP, checked equal to gRPC's; as counts per index and outcome. */
async function responseCounts(model: string): Promise<Record<string, Record<string, number>>> {
  const viaHttp = (await s.http.getInferenceStatistics(model)).model_stats[0].response_stats as Record<string, Record<string, { count: number; ns: number }>>;
  const viaGrpc = (await s.grpc.getInferenceStatistics(model)).model_stats[0].response_stats as Record<string, Record<string, { count: number | string; ns: number | string }>>;
  const normalized = Object.fromEntries(
    Object.entries(viaGrpc).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([n, x]) => [n, { count: Number(x.count), ns: Number(x.ns) }]))]),
  );
  expect(normalized).toEqual(viaHttp);
  return Object.fromEntries(
    Object.entries(viaHttp).map(([index, stats]) => {
      expect(Object.keys(stats)).toEqual(KEYS);
      return [index, Object.fromEntries(KEYS.map((k) => [k, stats[k]!.count]))];
    }),
  );
}

describe('response statistics', () => {
  it('counts every streamed response of a decoupled model by index', async () => {
    const done = new Promise<number>((resolve, reject) => {
      let got = 0;
      s.grpc.startStream((result, error) => {
        if (error) reject(error);
        else if (++got === 3) resolve(got);
      });
    });
    s.grpc.asyncStreamInfer('repeat', [new InferInput('IN', [1], 'INT32').setData(Int32Array.of(3))]);
    expect(await done).toBe(3);
    await s.grpc.stopStream();
    const ok = { compute_infer: 1, compute_output: 1, success: 1, fail: 0, empty_response: 0, cancel: 0 };
    expect(await responseCounts('repeat')).toEqual({ '0': ok, '1': ok, '2': ok });
  });

  it('counts the one response of a plain model, and its failures', async () => {
    await s.http.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(1, 2))]);
    await s.grpc.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(1, 2))]);
    // A request refused before it reaches the model has no response statistics.
    await expect(s.http.infer('simple', [new InferInput('NOPE', [1, 2], 'FP32').setData(Float32Array.of(1, 2))])).rejects.toThrow();
    expect(await responseCounts('simple')).toEqual({ '0': { compute_infer: 2, compute_output: 2, success: 2, fail: 0, empty_response: 0, cancel: 0 } });
  });
});
