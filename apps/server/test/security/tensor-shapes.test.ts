/**
 * A request's shape is checked at the transport before anything is scheduled: dimensions must be
 * exact integers, so a shape cannot slip past the element bound with a 0 beside a dimension that a
 * number no longer holds exactly (2^53 and beyond) and crash the instance that echoes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, undefined, ['simple', 'addsub', 'int64', 'uint64']);
});
afterAll(async () => {
  await s?.close();
});

/** POSTs a JSON text as it is written (numbers past 2^53 must reach the server as digits). */
const postJson = (route: string, body: string): Promise<Response> =>
  fetch(`http://${s.httpUrl}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

async function stillServes(): Promise<void> {
  const r = await s.http.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(3, 4))]);
  expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([3, 4]);
  const stats = (await s.http.getInferenceStatistics('simple')) as { model_stats: { inference_stats: { fail: { count: number } } }[] };
  expect(stats.model_stats[0]!.inference_stats.fail.count).toBe(0);
}

describe('request shapes past 2^53', () => {
  it('HTTP: shape [0, 9007199254740993] answers 400 naming the dimension; the instance that would echo it keeps serving', async () => {
    const res = await postJson(`/v2/models/simple/infer`, '{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[0,9007199254740993],"data":[]}]}');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe(
      "invalid shape for input 'INPUT0': dimension 9007199254740992 is larger than 9007199254740991, the largest this server accepts",
    );
    await stillServes();
  });

  it('gRPC: shape [0, 2^62] answers INVALID_ARGUMENT', async () => {
    const input = new InferInput('INPUT0', [0, 2 ** 62], 'FP32').setData(new Float32Array(0));
    await expect(s.grpc.infer('simple', [input])).rejects.toThrow(/dimension 4611686018427388000 is larger than 9007199254740991/);
    await stillServes();
  });
});

describe('JSON tensor values a datatype cannot hold', () => {
  it('HTTP: INT32 2^40 or 1e300 answers 400 naming the input and the range (they reached the model as 0)', async () => {
    for (const [value, shown] of [['1099511627776', '1099511627776'], ['1e300', '1e+300']] as const) {
      const res = await postJson(`/v2/models/addsub/infer`, `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[4],"data":[1,${value},3,4]},{"name":"INPUT1","datatype":"INT32","shape":[4],"data":[1,1,1,1]}]}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe(
        `unable to convert ${shown} to INT32 for input 'INPUT0': out of range [-2147483648, 2147483647]`,
      );
    }
  });
});

describe('64-bit integers in JSON data', () => {
  const inferJson = (model: string, datatype: string, values: string) =>
    postJson(`/v2/models/${model}/infer`, `{"inputs":[{"name":"INPUT0","datatype":"${datatype}","shape":[3],"data":[${values}]}]}`);

  it('INT64 and UINT64 values past 2^53 reach the model exact (JSON.parse rounded 9007199254740993 to ...992), and come back exact', async () => {
    for (const [model, datatype, values] of [
      ['int64', 'INT64', '9007199254740993,-9223372036854775808,9223372036854775807'],
      ['uint64', 'UINT64', '[9007199254740993],[1],[18446744073709551615]'],
    ] as const) {
      const res = await inferJson(model, datatype, values);
      expect(res.status).toBe(200);
      // The reply's text, not JSON.parse of it (which would round again).
      expect(await res.text()).toContain(`"data":[${values.replace(/[[\]]/g, '')}]`);
    }
  });

  it('the generate extension reads them exact too', async () => {
    const res = await postJson(`/v2/models/int64/generate`, '{"INPUT0":[9007199254740993,9223372036854775807]}');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"OUTPUT0":[9007199254740993,9223372036854775807]');
  });

  it('past the datatype, answers 400 naming the exact value, not a rounded one', async () => {
    const res = await inferJson('int64', 'INT64', '1,9223372036854775809,3');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe(
      "unable to convert 9223372036854775809 to INT64 for input 'INPUT0': out of range [-9223372036854775808, 9223372036854775807]",
    );
    await stillServes();
  });
});
