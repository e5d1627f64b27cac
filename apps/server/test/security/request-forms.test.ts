/**
 * Two request forms answered as Triton answers them, through a real server:
 * - an output named more than once is one requested output (Triton keeps them in a set), answered
 *   once, so a small request cannot draw an answer of any size;
 * - a raw binary request (`Inference-Header-Content-Length: 0`) to a BYTES input is that input's one
 *   element: the server prepends the length (the body carries none).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferRequestedOutput } from '@tritium/client';
import { exampleBackends } from '@tritium/backend-examples';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  // The example backends `tritium serve` binds (their identity answers each requested output).
  s = await startTestServer({ modelControlMode: 'explicit', loadModels: ['simple'], allowModelFileLoad: true }, undefined, ['simple'], exampleBackends());
  for (const [name, dims, maxBatchSize] of [
    ['bytes_one', [1], 0],
    ['bytes_batched', [1], 4],
    ['bytes_any', [-1], 0],
  ] as const) {
    const config = {
      backend: 'identity',
      max_batch_size: maxBatchSize,
      input: [{ name: 'INPUT0', data_type: 'TYPE_STRING', dims }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_STRING', dims }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    };
    await s.http.loadModel(name, { config: JSON.stringify(config), files: { 'file:1/x': new Uint8Array() } });
  }
});
afterAll(async () => {
  await s?.close();
});

const json = (body: Buffer) => JSON.parse(body.toString('utf8'));

describe('an output requested more than once', () => {
  const values = Float32Array.from({ length: 1000 }, (_, i) => i);

  it('HTTP: answered once, with the first entry\'s parameters (1000 repeats drew 1000 copies: 26 KB in, 2 MB out)', async () => {
    const body = JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1000], data: Array.from(values) }],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }, ...Array.from({ length: 999 }, () => ({ name: 'OUTPUT0', parameters: { binary_data: true } }))],
    });
    const res = await s.http.request('POST', '/v2/models/simple/infer', body, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    const head = json(res.body);
    expect(head.outputs).toHaveLength(1);
    expect(head.outputs[0]).toMatchObject({ name: 'OUTPUT0', shape: [1, 1000], data: Array.from(values) });
    expect(res.body.length).toBeLessThan(body.length);
  });

  it('gRPC: answered once', async () => {
    const input = new InferInput('INPUT0', [1, 3], 'FP32').setData(Float32Array.of(1, 2, 3));
    const outputs = Array.from({ length: 50 }, () => new InferRequestedOutput('OUTPUT0'));
    const r = await s.grpc.infer('simple', [input], { outputs });
    expect(r.response.outputs.map((o) => o.name)).toEqual(['OUTPUT0']);
    expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2, 3]);
  });
});

describe('raw binary request to a BYTES input', () => {
  const raw = (model: string, body: Buffer) =>
    s.http.request('POST', `/v2/models/${model}/infer`, body, { 'inference-header-content-length': 0, 'content-type': 'application/octet-stream' });

  /** The one BYTES element of OUTPUT0 in a binary reply. */
  const element = (res: { headers: Record<string, unknown>; body: Buffer }) => {
    const hl = Number(res.headers['inference-header-content-length']);
    const head = json(res.body.subarray(0, hl));
    const data = res.body.subarray(hl);
    return { shape: head.outputs[0].shape, length: data.readUInt32LE(0), bytes: data.subarray(4) };
  };

  it('the body is the element, whatever its bytes (no length prefix is read from it)', async () => {
    const body = Buffer.from('hello world, \u0000 raw bytes \u00ff', 'latin1');
    const res = await raw('bytes_one', body);
    expect(res.status).toBe(200);
    expect(element(res)).toEqual({ shape: [1], length: body.length, bytes: body });
  });

  it('a batching model gets the batch dimension; an empty body is an empty element', async () => {
    const res = await raw('bytes_batched', Buffer.from('abc'));
    expect(res.status).toBe(200);
    expect(element(res)).toMatchObject({ shape: [1, 1], length: 3 });
    const empty = await raw('bytes_one', Buffer.alloc(0));
    expect(empty.status).toBe(200);
    expect(element(empty)).toMatchObject({ shape: [1], length: 0 });
  });

  it('an input not shaped [1] is refused 400 with Triton\'s message', async () => {
    const res = await raw('bytes_any', Buffer.from('abc'));
    expect(res.status).toBe(400);
    expect(json(res.body).error).toBe("For BYTE datatype raw input 'INPUT0', the model must have input shape [1]");
  });
});
