/**
 * No server path reaches a client: a model that fails to load from an upload (the load API's `file:`
 * parameters) or from the repository is reported, in the load error, in later requests' 503 and in
 * the repository index, with its files named relative to the folder that holds the model
 * (`1/model.onnx`, `broken/1/model.onnx`), never the server's temporary folder (with its pid) or the
 * repository's location. Through a real `tritium serve`, over HTTP and gRPC.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, InferInput } from '@tritium/client';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-server-paths-'));
const repo = path.join(root, 'repo');
mkdirSync(path.join(repo, 'broken', '1'), { recursive: true });
const ONNX_CONFIG = (name: string) =>
  JSON.stringify({
    name,
    backend: 'onnxruntime',
    max_batch_size: 0,
    input: [{ name: 'X', data_type: 'TYPE_FP32', dims: [1] }],
    output: [{ name: 'Y', data_type: 'TYPE_FP32', dims: [1] }],
  });
writeFileSync(
  path.join(repo, 'broken', 'config.pbtxt'),
  'backend: "onnxruntime"\nmax_batch_size: 0\ninput [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]\noutput [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]\n',
);
writeFileSync(path.join(repo, 'broken', '1', 'model.onnx'), 'not a model');
afterAll(() => rmSync(root, { recursive: true, force: true }));

let serve: ServeProcess;
let http: number;
let grpc: GrpcInferenceServerClient;
beforeAll(async () => {
  serve = startServeProcess([`--model-repository=${repo}`, '--model-control-mode=explicit', '--allow-model-file-load=true']);
  let grpcPort: number;
  ({ http, grpc: grpcPort } = await serve.started);
  grpc = new GrpcInferenceServerClient(`127.0.0.1:${grpcPort}`);
});
afterAll(async () => {
  grpc?.close();
  await serve?.stop();
});

/** Every server path a message must not show. */
function expectNoServerPath(text: string): void {
  expect(text).not.toContain('tritium-override');
  expect(text).not.toContain(`${os.tmpdir()}/`);
  expect(text).not.toContain(root);
  expect(text).not.toContain(path.resolve(import.meta.dirname, '../../../..'));
}

async function post(pathName: string, body: unknown): Promise<{ status: number; text: string }> {
  const r = await fetch(`http://127.0.0.1:${http}${pathName}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: r.status, text: await r.text() };
}

const upload = (model: string, config: string, file: string, bytes: string) =>
  post(`/v2/repository/models/${model}/load`, { parameters: { config, [`file:${file}`]: Buffer.from(bytes).toString('base64') } });

const infer = (model: string) => post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', shape: [1], datatype: 'FP32', data: [1] }] });

describe('server paths in what clients read', () => {
  it('an uploaded ONNX file that does not load: named as uploaded in the load error, the 503s after it and the index', async () => {
    const load = await upload('up', ONNX_CONFIG('up'), '1/model.onnx', 'garbage');
    expect(load.status).toBe(400);
    expect(load.text).toContain("'1/model.onnx' is not a valid ONNX model");
    expectNoServerPath(load.text);
    const later = await infer('up');
    expect(later.status).toBe(503);
    expect(later.text).toContain("'1/model.onnx' is not a valid ONNX model");
    expectNoServerPath(later.text);
    const overGrpc = await grpc.infer('up', [new InferInput('X', [1], 'FP32').setData(new Float32Array(1))]).then(
      () => 'served',
      (e: Error) => e.message,
    );
    expect(overGrpc).toContain("'1/model.onnx' is not a valid ONNX model");
    expectNoServerPath(overGrpc);
  });

  it("an uploaded model.ts whose error shows its own file URL: the URL is written relative to the upload", async () => {
    const config = JSON.stringify({ name: 'ts', backend: 'python', max_batch_size: 0, input: [{ name: 'X', data_type: 'TYPE_FP32', dims: [1] }], output: [{ name: 'Y', data_type: 'TYPE_FP32', dims: [1] }] });
    const load = await upload('ts', config, '1/model.ts', 'throw new Error(`failed at ${import.meta.url}`);\n');
    expect(load.status).toBeGreaterThanOrEqual(400);
    expect(load.text).toContain('failed at 1/model.ts');
    expectNoServerPath(load.text);
  });

  it('a repository model that does not load: named inside the repository, in the load error and the index (HTTP and gRPC)', async () => {
    const load = await post('/v2/repository/models/broken/load', {});
    expect(load.text).toContain("'broken/1/model.onnx' is not a valid ONNX model");
    expectNoServerPath(load.text);
    const index = await post('/v2/repository/index', {});
    expect(index.text).toContain("'broken/1/model.onnx' is not a valid ONNX model");
    expectNoServerPath(index.text);
    const grpcIndex = await repositoryIndexOverGrpc();
    expect(grpcIndex).toContain("'broken/1/model.onnx' is not a valid ONNX model");
    expectNoServerPath(grpcIndex);
  });

  it('a file parameter leaving the model folder: its path relative to the model folder', async () => {
    const load = await upload('esc', ONNX_CONFIG('esc'), '../../evil', 'x');
    expect(JSON.parse(load.text)).toEqual({
      error: "Invalid file parameter 'file:../../evil' with normalized path '../../evil' must stay within model directory.",
    });
  });
});

/** RepositoryIndex over gRPC, its reply's bytes as text (the reasons are UTF-8 strings in it). */
async function repositoryIndexOverGrpc(): Promise<string> {
  return await new Promise<string>((resolve, reject) =>
    grpc.client.makeUnaryRequest(
      '/inference.GRPCInferenceService/RepositoryIndex',
      (x: Buffer) => x,
      (x: Buffer) => x.toString('latin1'),
      Buffer.alloc(0),
      (err, value) => (err ? reject(err) : resolve(value!)),
    ),
  );
}
