/**
 * A config sent through the load API does not choose its own limits: `tritium serve` holds it to
 * ceilings (--model-max-memory-mb 1024, --model-max-heap-mb 512, --model-max-instances 4,
 * --model-max-processes 16, --model-max-execute-ms 60000, --model-max-start-ms 60000), refusing a config over one with 400 /
 * INVALID_ARGUMENT naming the key, its value and the ceiling, before anything starts; a model that
 * sets no execute timeout gets the ceiling's. --model-limits=all holds the repository's models to
 * them too. (Without them, an upload with `tritium.memory_mb: 1000000`, `heap_mb: 900000` and
 * `count: 128` would start 128 processes.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, InferenceServerException } from '@tritium/client';
import { buildLoopModel } from '@tritium/onnx-gen';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

const identity = (name: string, count: number, parameters: Record<string, string> = {}) => ({
  name,
  backend: 'identity',
  max_batch_size: 0,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  instance_group: [{ kind: 'KIND_CPU', count }],
  parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { string_value: v }])),
});

async function load(http: number, model: string, parameters: Record<string, string>): Promise<{ status: number; error: string }> {
  const res = await fetch(`http://127.0.0.1:${http}/v2/repository/models/${model}/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parameters }),
  });
  const text = await res.text();
  return { status: res.status, error: text ? ((JSON.parse(text) as { error?: string }).error ?? '') : '' };
}

const upload = (config: object) => ({ config: JSON.stringify(config), 'file:1/x': '' });

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-model-ceilings-'));
beforeAll(() => {
  mkdirSync(path.join(repo, 'wide', '1'), { recursive: true });
  writeFileSync(
    path.join(repo, 'wide', 'config.pbtxt'),
    `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
instance_group [ { kind: KIND_CPU count: 8 } ]
`,
  );
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('an uploaded config, under the default ceilings', () => {
  let serve: ServeProcess;
  let http: number;
  let grpc: number;
  beforeAll(async () => {
    serve = startServeProcess(['--model-repository', repo, '--model-control-mode=explicit', '--allow-model-file-load=true', '--model-max-execute-ms=2000']);
    ({ http, grpc } = await serve.started);
  }, 60_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it.each([
    ['tritium.memory_mb', '1000000', "parameter 'tritium.memory_mb' is 1000000, over the server's ceiling of 1024 for uploaded models"],
    ['tritium.heap_mb', '900000', "parameter 'tritium.heap_mb' is 900000, over the server's ceiling of 512 for uploaded models"],
    ['tritium.execute_timeout_ms', '86400000', "parameter 'tritium.execute_timeout_ms' is 86400000, over the server's ceiling of 2000 for uploaded models"],
    ['tritium.start_timeout_ms', '2147483647', "parameter 'tritium.start_timeout_ms' is 2147483647, over the server's ceiling of 60000 for uploaded models"],
  ])('%s %s is refused 400 naming the key, its value and the ceiling', async (key, value, message) => {
    const r = await load(http, 'greedy', upload(identity('greedy', 1, { [key]: value })));
    expect(r.status).toBe(400);
    expect(r.error).toContain(`model 'greedy': ${message}`);
  });

  it('count 128 is refused naming the instances and the ceiling', async () => {
    const r = await load(http, 'greedy', upload(identity('greedy', 128)));
    expect(r.status).toBe(400);
    expect(r.error).toContain("model 'greedy': instance_group count (all groups) is 128, over the server's ceiling of 4 for uploaded models");
  });

  it('a config override without files is bounded too (the client chose it)', async () => {
    const r = await load(http, 'wide', { config: JSON.stringify(identity('wide', 8)) });
    expect(r.status).toBe(400);
    expect(r.error).toContain("model 'wide': instance_group count (all groups) is 8, over the server's ceiling of 4 for uploaded models");
  });

  it('over gRPC the refusal is INVALID_ARGUMENT with the same words', async () => {
    const client = new GrpcInferenceServerClient(`127.0.0.1:${grpc}`);
    try {
      const e = await client.loadModel('greedy', { config: JSON.stringify(identity('greedy', 1, { 'tritium.memory_mb': '1000000' })), files: { 'file:1/x': new Uint8Array() } }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(InferenceServerException);
      expect((e as InferenceServerException).status).toBe('StatusCode.INVALID_ARGUMENT');
      expect((e as InferenceServerException).message).toContain("parameter 'tritium.memory_mb' is 1000000, over the server's ceiling of 1024 for uploaded models");
    } finally {
      client.close();
    }
  });

  it('within the ceilings it loads; a model that sets no execute timeout gets the ceiling: a run that never ends is killed at 2000 ms', async () => {
    const config = {
      name: 'spin',
      backend: 'onnxruntime',
      max_batch_size: 0,
      input: [
        { name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] },
        { name: 'ITERATIONS', data_type: 'TYPE_INT64', dims: [1] },
      ],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
    };
    const r = await load(http, 'spin', { config: JSON.stringify(config), 'file:1/model.onnx': Buffer.from(buildLoopModel({ iterationsInput: 'ITERATIONS' })).toString('base64') });
    expect(r).toEqual({ status: 200, error: '' });
    const res = await fetch(`http://127.0.0.1:${http}/v2/models/spin/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] },
          { name: 'ITERATIONS', datatype: 'INT64', shape: [1], data: [2 ** 62] },
        ],
      }),
    });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toContain("model 'spin' instance 'spin_0_0' crashed: execute timed out after 2000 ms");
  }, 60_000);

  it("the execute timeout holds for Triton's example backends too: an uploaded identity model sleeping 60 s per execute is killed at 2000 ms", async () => {
    expect(await load(http, 'sleepy', upload(identity('sleepy', 1, { execute_delay_ms: '60000' })))).toEqual({ status: 200, error: '' });
    const res = await fetch(`http://127.0.0.1:${http}/v2/models/sleepy/infer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] }] }),
    });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toContain("model 'sleepy' instance 'sleepy_0_0' crashed: execute timed out after 2000 ms");
  }, 60_000);
});

it('--model-max-processes bounds the instances of uploaded models in the server, all together', async () => {
  const serve = startServeProcess(['--model-repository', repo, '--model-control-mode=explicit', '--allow-model-file-load=true', '--model-max-processes=3']);
  try {
    const { http } = await serve.started;
    expect(await load(http, 'a', upload(identity('a', 2)))).toEqual({ status: 200, error: '' });
    const r = await load(http, 'b', upload(identity('b', 2)));
    expect(r.status).toBe(400);
    expect(r.error).toContain(
      "model 'b': its 2 instances beside the 2 of uploaded models already in the server make 4, over the server's ceiling of 3 instances (processes) for uploaded models together",
    );
    // A repository model is not counted against it (nor bounded by it).
    expect(await load(http, 'wide', {})).toEqual({ status: 200, error: '' });
  } finally {
    await serve.stop();
  }
}, 60_000);

it('--model-limits=all holds the repository models to the ceilings too', async () => {
  const serve = startServeProcess(['--model-repository', repo, '--model-control-mode=explicit', '--model-limits=all', '--model-max-instances=6']);
  try {
    const { http } = await serve.started;
    const r = await load(http, 'wide', {});
    expect(r.status).toBe(400);
    expect(r.error).toContain("model 'wide': instance_group count (all groups) is 8, over the server's ceiling of 6 for models");
  } finally {
    await serve.stop();
  }
}, 60_000);
