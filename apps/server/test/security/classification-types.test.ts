/**
 * The classification extension on every output datatype, through a real server (HTTP and gRPC):
 * Triton's TopkClassifications takes the integer types and FP32/FP64 only, and prints each value
 * with std::to_string of the output's own type. Tritium ranked FP16 outputs by their raw 16-bit
 * patterns (so -2 ranked above 1, printed "49152.000000"), answered BOOL outputs as numbers, printed
 * integers as "9.000000" and rounded 64-bit ones past 2^53.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferRequestedOutput, type InferResult } from '@tritium/client';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ modelControlMode: 'explicit', allowModelFileLoad: true }, undefined, []);
  // One identity model per datatype, not batching: the classification is of the whole output.
  for (const type of ['FP16', 'BF16', 'BOOL', 'INT32', 'UINT64', 'FP32']) {
    const config = {
      backend: 'identity',
      max_batch_size: 0,
      input: [{ name: 'INPUT0', data_type: `TYPE_${type}`, dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: `TYPE_${type}`, dims: [-1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    };
    await s.http.loadModel(`id_${type.toLowerCase()}`, { config: JSON.stringify(config), files: { 'file:1/x': new Uint8Array() } });
  }
});
afterAll(async () => {
  await s?.close();
});

const top = (k: number) => [new InferRequestedOutput('OUTPUT0', { classCount: k })];

/** FP16 bit patterns: 1.0, -2.0, 0.5. */
const HALVES = Uint16Array.of(0x3c00, 0xc000, 0x3800);

describe('classification: unsupported output types are refused as Triton refuses them', () => {
  for (const [model, datatype, data] of [
    ['id_fp16', 'FP16', HALVES],
    ['id_bf16', 'BF16', Uint16Array.of(0x3f80, 0xc000, 0x3f00)],
    ['id_bool', 'BOOL', Uint8Array.of(1, 0, 1)],
  ] as const) {
    it(`${datatype}: HTTP 400 and gRPC INVALID_ARGUMENT naming the type, never 200 with ranked raw bits`, async () => {
      const input = () => [new InferInput('INPUT0', [3], datatype).setData(data)];
      const message = `class result not available for output due to unsupported type '${datatype}'`;
      await expect(s.http.infer(model, input(), { outputs: top(1) })).rejects.toThrow(message);
      await expect(s.grpc.infer(model, input(), { outputs: top(1) })).rejects.toThrow(message);
      await expect(s.grpc.infer(model, input(), { outputs: top(1) })).rejects.toMatchObject({ status: 'StatusCode.INVALID_ARGUMENT' });
      // The same output without classification is still served.
      const plain = await s.http.infer(model, input());
      expect(Buffer.from(plain.asBytes('OUTPUT0'))).toEqual(Buffer.from(data.buffer));
    });
  }
});

describe('classification: values printed as std::to_string prints the output type', () => {
  it('INT32 values as integers ("9:2"; it printed "9.000000:2")', async () => {
    const input = new InferInput('INPUT0', [4], 'INT32').setData(Int32Array.of(5, -2, 9, 7));
    for (const client of [s.http, s.grpc]) {
      const r = await client.infer('id_int32', [input], { outputs: top(3) });
      expect(r.asStrings('OUTPUT0')).toEqual(['9:2', '7:3', '5:0']);
    }
  });

  it('a gRPC stream classifies each response as unary calls do (it sent the raw tensor)', async () => {
    const got = new Promise<InferResult | Error>((resolve) => s.grpc.startStream((r, e) => resolve(e ?? r!)));
    s.grpc.asyncStreamInfer('id_int32', [new InferInput('INPUT0', [4], 'INT32').setData(Int32Array.of(5, -2, 9, 7))], { outputs: top(2) });
    const result = await got;
    await s.grpc.stopStream();
    if (result instanceof Error) throw result;
    expect(result.output('OUTPUT0')).toMatchObject({ datatype: 'BYTES', shape: [2] });
    expect(result.asStrings('OUTPUT0')).toEqual(['9:2', '7:3']);
  });

  it('UINT64 values past 2^53 ranked and printed exact (2^64-1 and 2^64-2 were both "18446744073709551616.000000")', async () => {
    const input = new InferInput('INPUT0', [3], 'UINT64').setData(BigUint64Array.of(2n ** 64n - 2n, 1n, 2n ** 64n - 1n));
    for (const client of [s.http, s.grpc]) {
      const r = await client.infer('id_uint64', [input], { outputs: top(2) });
      expect(r.asStrings('OUTPUT0')).toEqual(['18446744073709551615:2', '18446744073709551614:0']);
    }
  });

  it('FP32 keeps 6 decimals, and a value past 1e21 has every digit as printf("%f") writes it', async () => {
    const input = new InferInput('INPUT0', [3], 'FP32').setData(Float32Array.of(0.5, 1e30, -1.25));
    const r = await s.http.infer('id_fp32', [input], { outputs: top(3) });
    expect(r.asStrings('OUTPUT0')).toEqual([`${BigInt(Math.fround(1e30))}.000000:1`, '0.500000:0', '-1.250000:2']);
  });
});
