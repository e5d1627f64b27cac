/**
 * The load API takes `config` and `file:<path>` parameters only; any other is refused (Triton's gRPC
 * words: "unrecognized load parameter 'x'."), HTTP and gRPC alike, before anything loads. It was
 * ignored: a misspelt `confg` reloaded the model from disk without the override and answered success.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ modelControlMode: 'explicit', loadModels: ['simple'] }, undefined, ['simple']);
});
afterAll(async () => {
  await s?.close();
});

const override = JSON.stringify({
  backend: 'identity',
  max_batch_size: 2,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
});

const maxBatchSize = async () => (await s.http.getModelConfig('simple')).max_batch_size;

describe('load parameters', () => {
  it("HTTP: an unknown parameter is refused 400 and nothing reloads (a misspelt 'confg' answered 200)", async () => {
    const res = await s.http.request('POST', '/v2/repository/models/simple/load', JSON.stringify({ parameters: { confg: override } }), {
      'content-type': 'application/json',
    });
    expect([res.status, JSON.parse(res.body.toString()).error]).toEqual([400, "unrecognized load parameter 'confg'."]);
    const notObject = await s.http.request('POST', '/v2/repository/models/simple/load', JSON.stringify({ parameters: 'config' }));
    expect([notObject.status, JSON.parse(notObject.body.toString()).error]).toEqual([400, "load request 'parameters' must be a JSON object"]);
    expect(await maxBatchSize()).toBe(8);
  });

  it('gRPC: the same, INVALID_ARGUMENT', async () => {
    await expect(s.grpc.call('RepositoryModelLoad', { model_name: 'simple', parameters: { confg: { string_param: override } } }, { oneofs: true })).rejects.toMatchObject({
      status: 'StatusCode.INVALID_ARGUMENT',
      message: "unrecognized load parameter 'confg'.",
    });
    expect(await maxBatchSize()).toBe(8);
  });

  it("gRPC: a parameter of the wrong type is refused in Triton's words, naming the type it expects", async () => {
    await expect(s.grpc.call('RepositoryModelLoad', { model_name: 'simple', parameters: { config: { int64_param: 2 } } }, { oneofs: true })).rejects.toMatchObject({
      status: 'StatusCode.INVALID_ARGUMENT',
      message: "invalid value type for load parameter 'config', expected string_param.",
    });
    const file = { config: { string_param: override }, 'file:1/model.onnx': { string_param: 'not bytes' } };
    await expect(s.grpc.call('RepositoryModelLoad', { model_name: 'simple', parameters: file }, { oneofs: true })).rejects.toMatchObject({
      status: 'StatusCode.INVALID_ARGUMENT',
      message: "invalid value type for load parameter 'file:1/model.onnx', expected bytes_param.",
    });
    expect(await maxBatchSize()).toBe(8);
  });

  it('config is still applied', async () => {
    await s.grpc.loadModel('simple', { config: override });
    expect(await maxBatchSize()).toBe(2);
  });
});
