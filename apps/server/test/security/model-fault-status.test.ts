/**
 * A model that builds an output with a shape like [NaN,-1] is at fault, not the client:
 * 500 / INTERNAL, never 400 / INVALID_ARGUMENT. The author API's Tensor is where that error is made.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { InferInput, InferenceServerException } from '@tritium/client';
import { startTestServerWith, type TestServer } from '../support/start-server.ts';

let s: TestServer;
let repo: string;

const MODEL_TS = `
import { InferenceResponse, Tensor, TritonError, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]): Promise<InferenceResponse[]> {
    return requests.map((r) => {
      const mode = String(r.parameters()['mode'] ?? 'nan');
      if (mode === 'client') throw new TritonError('the client sent something wrong', TritonError.INVALID_ARG);
      return new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', new Float32Array(0), [NaN, -1])] });
    });
  }
}
`;

beforeAll(async () => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), 'tritium-nan-'));
  fs.mkdirSync(path.join(repo, 'nan_shape', '1'), { recursive: true });
  fs.writeFileSync(
    path.join(repo, 'nan_shape', 'config.pbtxt'),
    `backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, -1 ] } ]
`,
  );
  fs.writeFileSync(path.join(repo, 'nan_shape', '1', 'model.ts'), MODEL_TS);
  s = await startTestServerWith({ modelRepositories: [repo] }, [pythonLikeBackend()]);
});
afterAll(async () => {
  await s?.close();
  fs.rmSync(repo, { recursive: true, force: true });
});

const input = () => new InferInput('INPUT0', [2], 'FP32').setData(Float32Array.of(1, 2));

async function failure(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

describe('a model returning shape [NaN,-1]', () => {
  it('HTTP 500 naming the tensor and shape', async () => {
    const e = await failure(s.http.infer('nan_shape', [input()]));
    expect(e.status).toBe('500');
    expect(e.message).toBe("tensor 'OUTPUT0': invalid shape [NaN,-1]");
  });

  it('gRPC INTERNAL', async () => {
    const e = await failure(s.grpc.infer('nan_shape', [input()]));
    expect(e.status).toBe('StatusCode.INTERNAL');
  });

  it('a model that blames the client on purpose (TritonError INVALID_ARG) still gets 400', async () => {
    const e = await failure(s.http.infer('nan_shape', [input()], { parameters: { mode: 'client' } }));
    expect([e.status, e.message]).toEqual(['400', 'the client sent something wrong']);
  });
});
