/**
 * Triton's `--http-header-forward-pattern` / `--grpc-header-forward-pattern`: request headers (gRPC
 * metadata) whose name matches become string parameters a `model.ts` reads, through a real server;
 * a reserved key is refused with Triton's message instead of forwarded.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, HttpInferenceServerClient, InferInput } from '@tritium/client';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { forwardHeaders } from '../src/protocol/header-forward.ts';
import { startTestServer, type TestServer } from './support/start-server.ts';

const CONFIG = `name: "params"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "PARAMS" data_type: TYPE_STRING dims: [ 1 ] } ]
`;

/** Answers the parameters it was given, as JSON. */
const MODEL = `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse({ outputTensors: [new Tensor('PARAMS', [JSON.stringify(r.parameters())], [1])] }));
  }
}
`;

let repo: string;
let s: TestServer;
beforeAll(async () => {
  repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-header-forward-'));
  mkdirSync(path.join(repo, 'params', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'params', 'config.pbtxt'), CONFIG);
  writeFileSync(path.join(repo, 'params', '1', 'model.ts'), MODEL);
  s = await startTestServer(
    { modelRepositories: [repo], headerForward: { http: /^(x-|priority$)/, grpc: /^x-/ } },
    undefined,
    undefined,
    [pythonLikeBackend()],
  );
}, 120_000);
afterAll(async () => {
  await s?.close();
  rmSync(repo, { recursive: true, force: true });
});

const x = () => new InferInput('X', [1], 'INT32').setData(Int32Array.of(1));

describe('header forwarding', () => {
  it('HTTP: headers the pattern matches reach the model as string parameters, beside the request body\'s', async () => {
    const r = await s.http.infer('params', [x()], { headers: { 'X-User-Id': '42', 'x-tenant': 'blue', 'not-forwarded': 'no' }, parameters: { body: 1 } });
    expect(JSON.parse(String(r.asStrings('PARAMS')[0]))).toEqual({ body: 1, 'x-user-id': '42', 'x-tenant': 'blue' });
  });

  it('gRPC: metadata the pattern matches reaches the model', async () => {
    const grpc = new GrpcInferenceServerClient(s.grpcUrl, { headers: { 'x-user-id': '7', other: 'no' } });
    try {
      const r = await grpc.infer('params', [x()]);
      expect(JSON.parse(String(r.asStrings('PARAMS')[0]))).toEqual({ 'x-user-id': '7' });
    } finally {
      grpc.close();
    }
  });

  it("a matched header that is one of Triton's reserved parameter keys is refused with its message", async () => {
    const http = new HttpInferenceServerClient(s.httpUrl, { headers: { priority: '1' } });
    try {
      await expect(http.infer('params', [x()])).rejects.toThrow("Header 'priority' is reserved for Triton usage and cannot be forwarded.");
    } finally {
      http.close();
    }
  });

  it('forwards nothing without a pattern', () => {
    const request = { id: '1', model: 'm', inputs: [], parameters: { a: 1 } };
    expect(forwardHeaders(request, undefined, () => [['x-user-id', '1']])).toBe(request);
    expect(forwardHeaders(request, /^x-/, () => [['x-user-id', '1']]).parameters).toEqual({ a: 1, 'x-user-id': '1' });
  });
});
