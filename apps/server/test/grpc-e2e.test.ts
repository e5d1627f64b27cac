/** End-to-end over gRPC: every RPC through @tritium/client against the real server on loopback. */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, Client, getChannelzHandlers, type ServiceError } from '@grpc/grpc-js';
import { InferInput, InferRequestedOutput, InferenceServerException, type InferResult } from '@tritium/client';
import {
  encodeInferRequest,
  decodeInferResponse,
  plainCodec,
  type HealthCheckRequest,
  type HealthCheckRequestInit,
  type HealthCheckResponse,
  type HealthCheckResponseInit,
  type WireInferRequest,
} from '@tritium/client/proto';
import { startTestServer, type TestServer } from './support/start-server.ts';

let s: TestServer;
const SHM_KEY = `/tritium-grpc-test-${process.pid}`;
const SHM_FILE = `/dev/shm${SHM_KEY}`;

beforeAll(async () => {
  s = await startTestServer({ allowClientShm: true, modelControlMode: 'explicit', loadModels: ['*'] }, undefined, ['simple', 'strings', 'addsub', 'repeat']);
});
afterAll(async () => {
  await s?.close();
  fs.rmSync(SHM_FILE, { force: true });
});

const fp32 = (shape: number[], values: number[]) => new InferInput('INPUT0', shape, 'FP32').setData(Float32Array.from(values));

async function grpcError(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

/** Sends arbitrary bytes as a ModelInfer / other request (malformed protobuf). */
function rawCall(method: string, payload: Buffer): Promise<ServiceError | Buffer> {
  const c = new Client(s.grpcUrl, credentials.createInsecure());
  return new Promise((resolve) =>
    c.makeUnaryRequest(
      `/inference.GRPCInferenceService/${method}`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      payload,
      (err: ServiceError | null, value?: Buffer) => {
        c.close();
        resolve(err ?? value!);
      },
    ),
  );
}

describe('gRPC health and metadata', () => {
  it('answers live, ready, server and model metadata, model readiness', async () => {
    expect(await s.grpc.isServerLive()).toBe(true);
    expect(await s.grpc.isServerReady()).toBe(true);
    expect(await s.grpc.isModelReady('simple')).toBe(true);
    expect(await s.grpc.isModelReady('simple', '1')).toBe(true);
    expect(await s.grpc.isModelReady('nope')).toBe(false);
    const meta = await s.grpc.getServerMetadata();
    expect(meta.extensions).toContain('binary_tensor_data');
    const mm = await s.grpc.getModelMetadata('simple');
    expect(mm).toMatchObject({ name: 'simple', versions: ['1'], inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, -1] }] });
    const e = await grpcError(s.grpc.getModelMetadata('nope'));
    expect(e.status).toBe('StatusCode.NOT_FOUND');
    expect(e.message).toBe("Request for unknown model: 'nope' is not found");
  });

  it('serves grpc.health.v1.Health/Check', async () => {
    const c = new Client(s.grpcUrl, credentials.createInsecure());
    const req = plainCodec<HealthCheckRequest, HealthCheckRequestInit>('grpc.health.v1.HealthCheckRequest');
    const res = plainCodec<HealthCheckResponse, HealthCheckResponseInit>('grpc.health.v1.HealthCheckResponse');
    const out = await new Promise<HealthCheckResponse>((resolve, reject) =>
      c.makeUnaryRequest('/grpc.health.v1.Health/Check', req.encode, res.decode, { service: '' }, (err: ServiceError | null, v?: HealthCheckResponse) =>
        err ? reject(err) : resolve(v!),
      ),
    );
    c.close();
    expect(out.status).toBe('SERVING');
  });

  it('returns the model config as a ModelConfig message, and statistics', async () => {
    const { config } = await s.grpc.getModelConfig('simple');
    expect(config).toMatchObject({ name: 'simple', backend: 'identity', max_batch_size: 8 });
    expect(config?.input[0]).toMatchObject({ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] });
    await s.grpc.infer('simple', [fp32([1, 2], [1, 2])]);
    const stats = await s.grpc.getInferenceStatistics('simple');
    expect(stats.model_stats[0].name).toBe('simple');
    expect(stats.model_stats[0].inference_stats?.success?.count).toBeGreaterThan(0);
    const all = await s.grpc.getInferenceStatistics();
    expect(all.model_stats.length).toBeGreaterThanOrEqual(4);
  });
});

describe('gRPC server bookkeeping', () => {
  it('registers no channelz server (grpc-js keeps no per-call channelz counters)', async () => {
    // The server runs in this process, on the same grpc-js module: with channelz on it would be listed.
    expect(await s.grpc.isServerLive()).toBe(true);
    const servers = await new Promise<unknown[]>((resolve, reject) => {
      const getServers = getChannelzHandlers().GetServers as unknown as (
        call: { request: { start_server_id: string; max_results: string } },
        callback: (error: unknown, value?: { server: unknown[] }) => void,
      ) => void;
      getServers({ request: { start_server_id: '0', max_results: '100' } }, (error, value) => (error ? reject(error) : resolve(value!.server)));
    });
    expect(servers).toEqual([]);
  });
});

describe('gRPC ModelInfer', () => {
  it('round-trips FP32 raw contents and selects outputs', async () => {
    const r = await s.grpc.infer('simple', [fp32([2, 3], [1, 2, 3, 4, 5, 6])], {
      requestId: 'abc',
      outputs: [new InferRequestedOutput('OUTPUT0')],
    });
    expect(r.id).toBe('abc');
    expect(r.modelVersion).toBe('1');
    expect(r.output('OUTPUT0')?.shape).toEqual([2, 3]);
    expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('round-trips BYTES', async () => {
    const r = await s.grpc.infer('strings', [new InferInput('INPUT0', [3], 'BYTES').setData(['a', 'héllo', ''])]);
    expect(r.asStrings('OUTPUT0')).toEqual(['a', 'héllo', '']);
  });

  it('accepts typed contents (no raw_input_contents)', async () => {
    const req: WireInferRequest = {
      model_name: 'addsub',
      model_version: '',
      id: '',
      parameters: {},
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [4], parameters: {}, contents: { int_contents: [1, 2, 3, 4] } },
        { name: 'INPUT1', datatype: 'INT32', shape: [4], parameters: {}, contents: { int_contents: [10, 20, 30, 40] } },
      ],
      outputs: [],
      raw_input_contents: [],
    };
    const r = await s.grpc.inferWire(req);
    const out0 = r.outputs.findIndex((o) => o.name === 'OUTPUT0');
    expect(Array.from(new Int32Array(new Uint8Array(r.raw_output_contents[out0]!).buffer))).toEqual([11, 22, 33, 44]);
  });

  it('answers errors with Triton statuses and messages', async () => {
    const cases: [Promise<unknown>, string, RegExp | string][] = [
      [s.grpc.infer('nope', [fp32([1, 1], [1])]), 'NOT_FOUND', "Request for unknown model: 'nope' is not found"],
      [s.grpc.infer('simple', [fp32([1, 1], [1])], { modelVersion: '3' }), 'NOT_FOUND', "Request for unknown model: 'simple' version 3 is not found"],
      [s.grpc.infer('simple', [new InferInput('INPUT0', [1, 1], 'INT32').setData(Int32Array.of(1))]), 'INVALID_ARGUMENT', "inference input 'INPUT0' data-type is 'INT32', but model 'simple' expects 'FP32'"],
      [s.grpc.infer('simple', [fp32([3], [1, 2, 3])]), 'INVALID_ARGUMENT', "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,-1], got [3]"],
      [s.grpc.infer('simple', []), 'INVALID_ARGUMENT', "expected 1 inputs but got 0 inputs for model 'simple'"],
      [s.grpc.infer('simple', [fp32([9, 1], [1, 2, 3, 4, 5, 6, 7, 8, 9])]), 'INVALID_ARGUMENT', "inference request batch-size must be <= 8 for 'simple'"],
      [s.grpc.infer('repeat', [new InferInput('IN', [1], 'INT32').setData(Int32Array.of(1))]), 'UNIMPLEMENTED', "ModelInfer RPC doesn't support models with decoupled transaction policy"],
      [s.grpc.infer('simple', [fp32([1, 1], [1])], { parameters: { triton_foo: true } }), 'INVALID_ARGUMENT', "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified."],
      [s.grpc.infer('simple', [fp32([1, 1], [1])], { modelVersion: 'x' }), 'INVALID_ARGUMENT', "failed to parse model version 'x'"],
    ];
    for (const [p, status, message] of cases) {
      const e = await grpcError(p);
      expect(e.status).toBe(`StatusCode.${status}`);
      expect(e.message).toContain(message);
    }
    const bad: WireInferRequest = {
      model_name: 'simple',
      model_version: '',
      id: '',
      parameters: {},
      inputs: [{ name: 'INPUT0', datatype: 'FLOAT', shape: [1, 1], parameters: {} }],
      outputs: [],
      raw_input_contents: [new Uint8Array(4)],
    };
    const e = await grpcError(s.grpc.inferWire(bad));
    expect(e.status).toBe('StatusCode.INVALID_ARGUMENT');
    expect(e.message).toBe("invalid datatype 'FLOAT' for input 'INPUT0'");
    const huge = await grpcError(s.grpc.inferWire({ ...bad, inputs: [{ ...bad.inputs[0]!, datatype: 'FP32', shape: [1, 2 ** 40] }] }));
    expect(huge.status).toBe('StatusCode.RESOURCE_EXHAUSTED');
    const missing = await grpcError(s.grpc.inferWire({ ...bad, inputs: [{ ...bad.inputs[0]!, datatype: 'FP32' }], raw_input_contents: [] }));
    expect(missing.message).toBe("unable to find data for input tensor 'INPUT0' for model 'simple' in request.");
  });

  it('answers malformed protobuf with INVALID_ARGUMENT', async () => {
    const err = (await rawCall('ModelInfer', Buffer.from([0x0a, 0xff, 0xff, 0x01]))) as ServiceError;
    expect(err.code).toBe(3);
    expect(err.details).toMatch(/^failed to parse ModelInferRequest: malformed protobuf/);
    const err2 = (await rawCall('ModelMetadata', Buffer.from([0x0f, 0x01]))) as ServiceError;
    expect(err2.code).toBe(3);
    const ok = await rawCall('ModelInfer', encodeInferRequest({
      model_name: 'simple', model_version: '', id: '', parameters: {}, outputs: [],
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], parameters: {} }],
      raw_input_contents: [new Uint8Array(Float32Array.of(7).buffer)],
    }));
    expect(decodeInferResponse(ok as Buffer).model_name).toBe('simple');
  });
});

describe('gRPC ModelStreamInfer', () => {
  function collect(count: number, send: () => void): Promise<{ results: InferResult[]; errors: InferenceServerException[] }> {
    const results: InferResult[] = [];
    const errors: InferenceServerException[] = [];
    return new Promise((resolve) => {
      s.grpc.startStream((r, e) => {
        if (r && !e) results.push(r);
        if (e) errors.push(e);
        if (results.length + errors.length >= count) resolve({ results, errors });
      });
      send();
    });
  }

  it('streams decoupled responses with triton_final_response, and the empty final when asked', async () => {
    const { results } = await collect(4, () => {
      s.grpc.asyncStreamInfer('repeat', [new InferInput('IN', [1], 'INT32').setData(Int32Array.of(3))], {
        requestId: 'r1',
        enableEmptyFinalResponse: true,
      });
    });
    await s.grpc.stopStream();
    expect(results.slice(0, 3).map((r) => r.asTypedArray('OUT', 'INT32')[0])).toEqual([0, 1, 2]);
    expect(results.slice(0, 3).every((r) => r.parameters['triton_final_response'] === false)).toBe(true);
    expect(results[3]!.parameters['triton_final_response']).toBe(true);
    expect(results[3]!.response.outputs).toHaveLength(0);
    expect(results[3]!.id).toBe('r1');
  });

  it('sends zero responses for n=0 and one final response for a non-decoupled model; errors keep the stream open', async () => {
    const { results, errors } = await collect(3, () => {
      s.grpc.asyncStreamInfer('repeat', [new InferInput('IN', [1], 'INT32').setData(Int32Array.of(0))]);
      s.grpc.asyncStreamInfer('nope', [fp32([1, 1], [1])]);
      s.grpc.asyncStreamInfer('simple', [fp32([1, 2], [5, 6])]);
      s.grpc.asyncStreamInfer('simple', [fp32([1, 1], [9])], { requestId: 'last' });
    });
    await s.grpc.stopStream();
    expect(errors.map((e) => e.message)).toEqual(["Request for unknown model: 'nope' is not found"]);
    expect(results.map((r) => r.parameters['triton_final_response'])).toEqual([true, true]);
    expect(results.map((r) => r.asTypedArray('OUTPUT0', 'FP32')[0]).sort()).toEqual([5, 9]);
  });

  it('closes the stream with a gRPC status when triton_grpc_error is set', async () => {
    const err = await new Promise<InferenceServerException | undefined>((resolve) => {
      s.grpc.startStream((_r, e) => resolve(e), { grpcErrors: true });
      s.grpc.asyncStreamInfer('nope', [fp32([1, 1], [1])]);
    });
    await s.grpc.stopStream();
    expect(err?.status).toBe('StatusCode.NOT_FOUND');
  });
});

describe('gRPC repository, shared memory, settings', () => {
  it('indexes, unloads and loads with a config override', async () => {
    const index = await s.grpc.getModelRepositoryIndex();
    expect(index.map((m) => m.name)).toEqual(expect.arrayContaining(['simple', 'strings', 'addsub', 'repeat']));
    await s.grpc.unloadModel('strings');
    expect(await s.grpc.isModelReady('strings')).toBe(false);
    const ready = await s.grpc.getModelRepositoryIndex({ ready: true });
    expect(ready.map((m) => m.name)).not.toContain('strings');
    const override = JSON.stringify({
      backend: 'identity',
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_STRING', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_STRING', dims: [-1] }],
    });
    await s.grpc.loadModel('strings', { config: override });
    expect((await s.grpc.getModelConfig('strings')).config?.max_batch_size).toBe(4);
    const e = await grpcError(s.grpc.loadModel('strings', { config: '{nope' }));
    expect(e.status).toBe('StatusCode.INVALID_ARGUMENT');
    const files = await grpcError(s.grpc.loadModel('strings', { config: override, files: { 'file:1/model.onnx': new Uint8Array(3) } }));
    expect(files.status).toBe('StatusCode.UNIMPLEMENTED');
    expect(files.message).toContain('--allow-model-file-load');
  });

  it('registers system shared memory, reads inputs from it and writes outputs into it', async () => {
    fs.writeFileSync(SHM_FILE, Buffer.alloc(64));
    const fd = fs.openSync(SHM_FILE, 'r+');
    fs.writeSync(fd, Buffer.from(Float32Array.of(1.5, 2.5).buffer), 0, 8, 8);
    fs.closeSync(fd);
    await s.grpc.registerSystemSharedMemory('region', SHM_KEY, 64);
    const dup = await grpcError(s.grpc.registerSystemSharedMemory('region', SHM_KEY, 64));
    expect(dup.status).toBe('StatusCode.ALREADY_EXISTS');
    expect(await s.grpc.getSystemSharedMemoryStatus()).toEqual({ region: { name: 'region', key: SHM_KEY, offset: 0, byte_size: 64 } });
    const input = new InferInput('INPUT0', [1, 2], 'FP32').setSharedMemory('region', 8, 8);
    const output = new InferRequestedOutput('OUTPUT0').setSharedMemory('region', 8, 32);
    const r = await s.grpc.infer('simple', [input], { outputs: [output] });
    expect(r.output('OUTPUT0')?.parameters['shared_memory_region']).toBe('region');
    const back = fs.readFileSync(SHM_FILE).subarray(32, 40);
    expect(Array.from(new Float32Array(new Uint8Array(back).buffer))).toEqual([1.5, 2.5]);
    const oob = await grpcError(s.grpc.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setSharedMemory('region', 8, 60)]));
    expect(oob.status).toBe('StatusCode.INVALID_ARGUMENT');
    await s.grpc.unregisterSystemSharedMemory('region');
    expect(await s.grpc.getSystemSharedMemoryStatus()).toEqual({});
    const gone = await grpcError(s.grpc.getSystemSharedMemoryStatus('region'));
    expect(gone.status).toBe('StatusCode.NOT_FOUND');
    const cuda = await grpcError(s.grpc.getCudaSharedMemoryStatus());
    expect(cuda.status).toBe('StatusCode.UNIMPLEMENTED');
    expect(cuda.message).toContain('CUDA shared memory is not supported');
  });

  it('reads and updates trace and log settings', async () => {
    expect((await s.grpc.getTraceSettings())['trace_level']).toEqual(['OFF']);
    // No trace file was given at start: Triton refuses to turn tracing on.
    const off = await grpcError(s.grpc.updateTraceSettings({ trace_level: ['TIMESTAMPS'] }, 'simple'));
    expect(off.message).toBe('Attempting to set invalid trace setting :trace file name is not given');
    const t = await s.grpc.updateTraceSettings({ trace_rate: ['5'] }, 'simple');
    expect(t['trace_rate']).toEqual(['5']);
    expect((await s.grpc.getTraceSettings())['trace_rate']).toEqual(['1000']);
    const l = await s.grpc.updateLogSettings({ log_verbose_level: 2 });
    expect(l['log_verbose_level']).toBe(2);
    expect((await s.grpc.getLogSettings())['log_info']).toBe(true);
    const bad = await grpcError(s.grpc.updateLogSettings({ log_nope: true }));
    expect(bad.status).toBe('StatusCode.INVALID_ARGUMENT');
    await s.grpc.updateLogSettings({ log_verbose_level: 0 });
  });

  it('serves Prometheus metrics on the metrics port', async () => {
    await s.grpc.infer('simple', [fp32([1, 1], [1])]);
    const text = await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`).then((r) => r.text());
    expect(text).toMatch(/^# TYPE nv_inference_request_success counter$/m);
    expect(text).toMatch(/^nv_inference_request_success\{model="simple",version="1"\} [1-9]\d*$/m);
    expect(text).toMatch(/^nv_inference_request_failure\{model="simple",version="1",reason="BACKEND"\} \d+$/m);
    expect(text).toMatch(/^nv_inference_exec_count\{model="simple",version="1"\} \d+$/m);
    expect(text).toMatch(/^nv_cpu_utilization \d/m);
    expect(text).toMatch(/^tritium_instance_healthy\{model="simple",version="1",instance="simple_0_0"\} 1$/m);
    expect((await fetch(`http://127.0.0.1:${s.metricsPort}/nope`)).status).toBe(404);
  });
});

