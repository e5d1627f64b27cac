/** End-to-end over HTTP: every KServe v2 route through @tritium/client against the real server. */
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferRequestedOutput, InferenceServerException } from '@tritium/client';
import { startTestServer, type TestServer } from './support/start-server.ts';

let s: TestServer;
const MAX_INPUT = 1 << 20;

beforeAll(async () => {
  s = await startTestServer({ httpMaxInputSize: MAX_INPUT, httpMaxHeaderCount: 40, modelControlMode: 'explicit', loadModels: ['*'] }, undefined, ['simple', 'strings', 'addsub', 'repeat']);
});
afterAll(async () => {
  await s?.close();
});

const fp32 = (shape: number[], values: number[]) => new InferInput('INPUT0', shape, 'FP32').setData(Float32Array.from(values));
const json = (body: Buffer) => JSON.parse(body.toString('utf8'));

async function httpError(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

async function post(path: string, body: string | Buffer, headers: Record<string, string | number> = {}) {
  return s.http.request('POST', path, body, { 'content-type': 'application/json', ...headers });
}

describe('HTTP health, metadata, routing', () => {
  it('answers health with empty bodies, metadata as JSON, 404 and 405 as Triton', async () => {
    const live = await s.http.request('GET', '/v2/health/live');
    expect([live.status, live.body.length]).toEqual([200, 0]);
    expect(await s.http.isServerReady()).toBe(true);
    expect((await s.http.getServerMetadata()).extensions).toContain('binary_tensor_data');
    expect(await s.http.isModelReady('simple')).toBe(true);
    expect(await s.http.isModelReady('simple', '1')).toBe(true);
    const notReady = await s.http.request('GET', '/v2/models/nope/ready');
    expect([notReady.status, json(notReady.body)]).toEqual([400, { error: 'Model version not ready' }]);
    expect(await s.http.getModelMetadata('simple')).toMatchObject({ name: 'simple', versions: ['1'], platform: 'identity' });
    const nf = await s.http.request('GET', '/v2/nothing');
    expect([nf.status, json(nf.body)]).toEqual([404, { error: 'Not Found' }]);
    const na = await s.http.request('DELETE', '/v2/health/live');
    expect([na.status, json(na.body)]).toEqual([405, { error: 'Method Not Allowed' }]);
    const e = await httpError(s.http.getModelMetadata('nope'));
    expect([e.status, e.message]).toEqual(['404', "Request for unknown model: 'nope' is not found"]);
  });

  it('serves config (Triton JSON) and statistics', async () => {
    const config = await s.http.getModelConfig('simple');
    expect(config).toMatchObject({ name: 'simple', max_batch_size: 8, input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }] });
    const grpcConfig = (await s.grpc.getModelConfig('simple')).config;
    expect(config.input).toEqual(grpcConfig?.input);
    await s.http.infer('simple', [fp32([1, 1], [1])]);
    expect((await s.http.getInferenceStatistics('simple')).model_stats[0].inference_count).toBeGreaterThan(0);
    expect((await s.http.getInferenceStatistics()).model_stats.length).toBeGreaterThanOrEqual(4);
  });
});

describe('HTTP infer', () => {
  it('binary in, binary out (default), with request id', async () => {
    const r = await s.http.infer('simple', [fp32([2, 2], [1, 2, 3, 4])], { requestId: 'x1' });
    expect(r.id).toBe('x1');
    expect(r.output('OUTPUT0')?.parameters['binary_data_size']).toBe(16);
    expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([1, 2, 3, 4]);
  });

  it('JSON in (nested and flat), JSON out; id omitted when empty; model_version a string', async () => {
    const body = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [2, 2], datatype: 'FP32', data: [[1, 2], [3, 4]] }] });
    const res = await post('/v2/models/simple/infer', body);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(json(res.body)).toEqual({ model_name: 'simple', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [2, 2], data: [1, 2, 3, 4] }] });
    const flat = await post('/v2/models/simple/versions/1/infer', JSON.stringify({ id: 'f', inputs: [{ name: 'INPUT0', shape: [1, 3], datatype: 'FP32', data: [5, 6, 7] }] }));
    expect(json(flat.body).id).toBe('f');
    const strings = await s.http.infer('strings', [new InferInput('INPUT0', [2], 'BYTES').setData(['añb', 'c'], { binary: false })], {
      outputs: [new InferRequestedOutput('OUTPUT0', { binary: false })],
    });
    expect(strings.asStrings('OUTPUT0')).toEqual(['añb', 'c']);
  });

  it('mixes a binary input with a JSON output, and gzip both ways', async () => {
    const r = await s.http.infer('simple', [fp32([1, 300], Array.from({ length: 300 }, (_, i) => i))], {
      outputs: [new InferRequestedOutput('OUTPUT0', { binary: false })],
      requestCompressionAlgorithm: 'gzip',
      responseCompressionAlgorithm: 'gzip',
    });
    expect(r.asTypedArray('OUTPUT0', 'FP32')[299]).toBe(299);
    const raw = await s.http.request('POST', '/v2/models/simple/infer', zlib.deflateSync(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', data: [2] }] })), {
      'content-encoding': 'deflate',
      'accept-encoding': 'deflate',
    });
    expect(raw.status).toBe(200);
    // Triton compresses whenever Accept-Encoding asks, however small the reply.
    expect(raw.headers['content-encoding']).toBe('deflate');
    expect(json(raw.body).outputs[0].data).toEqual([2]);
  });

  it('classification extension: top-k as "value:index" BYTES', async () => {
    const r = await s.http.infer('simple', [fp32([1, 4], [0.1, 0.9, 0.5, 0.2])], {
      outputs: [new InferRequestedOutput('OUTPUT0', { binary: false, classCount: 2 })],
    });
    expect(r.output('OUTPUT0')).toMatchObject({ datatype: 'BYTES', shape: [1, 2] });
    expect(r.asStrings('OUTPUT0')).toEqual(['0.900000:1', '0.500000:2']);
    const viaGrpc = await s.grpc.infer('simple', [fp32([1, 4], [0.1, 0.9, 0.5, 0.2])], { outputs: [new InferRequestedOutput('OUTPUT0', { classCount: 1 })] });
    expect(viaGrpc.asStrings('OUTPUT0')).toEqual(['0.900000:1']);
  });

  it('generate and generate_stream (SSE), including a decoupled model', async () => {
    const g = await post('/v2/models/simple/generate', JSON.stringify({ INPUT0: [1, 2, 3], parameters: { priority: 0 } }));
    expect([g.status, json(g.body)]).toEqual([200, { model_name: 'simple', model_version: '1', OUTPUT0: [1, 2, 3] }]);
    const str = await post('/v2/models/strings/generate', JSON.stringify({ id: 'q', INPUT0: 'hello' }));
    expect(json(str.body)).toEqual({ id: 'q', model_name: 'strings', model_version: '1', OUTPUT0: 'hello' });
    const sse = await post('/v2/models/repeat/generate_stream', JSON.stringify({ IN: 3 }));
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = sse.body.toString().split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(events.map((e) => e.OUT)).toEqual([0, 1, 2]);
    const many = await post('/v2/models/repeat/generate', JSON.stringify({ IN: 2 }));
    expect([many.status, json(many.body).error]).toEqual([501, "generate expects exactly one response from model 'repeat', got 2; use generate_stream"]);
    const unknown = await post('/v2/models/nope/generate_stream', '{}');
    expect([unknown.status, json(unknown.body).error]).toEqual([404, "Request for unknown model: 'nope' is not found"]);
    const badInput = await post('/v2/models/simple/generate', JSON.stringify({ NOPE: 1 }));
    expect([badInput.status, json(badInput.body).error]).toEqual([400, "unexpected inference input 'NOPE' for model 'simple'"]);
  });

  it('raw binary request (Inference-Header-Content-Length: 0)', async () => {
    const res = await s.http.request('POST', '/v2/models/simple/infer', Buffer.from(Float32Array.of(1, 2, 3).buffer), {
      'inference-header-content-length': 0,
      'content-type': 'application/octet-stream',
    });
    expect(res.status).toBe(200);
    const hl = Number(res.headers['inference-header-content-length']);
    const head = json(res.body.subarray(0, hl));
    expect(head.outputs[0]).toMatchObject({ name: 'OUTPUT0', shape: [1, 3], parameters: { binary_data_size: 12 } });
    expect(Array.from(new Float32Array(new Uint8Array(res.body.subarray(hl)).buffer))).toEqual([1, 2, 3]);
  });

  it('answers every error with Triton status and message', async () => {
    const cases: [Promise<unknown>, string, string][] = [
      [s.http.infer('nope', [fp32([1, 1], [1])]), '404', "Request for unknown model: 'nope' is not found"],
      [s.http.infer('simple', [new InferInput('INPUT0', [1, 1], 'INT32').setData(Int32Array.of(1))]), '400', "inference input 'INPUT0' data-type is 'INT32', but model 'simple' expects 'FP32'"],
      [s.http.infer('simple', [fp32([3], [1, 2, 3])]), '400', "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,-1], got [3]"],
      [s.http.infer('simple', []), '400', "expected 1 inputs but got 0 inputs for model 'simple'"],
      [s.http.infer('simple', [fp32([9, 1], [1, 2, 3, 4, 5, 6, 7, 8, 9])]), '400', "inference request batch-size must be <= 8 for 'simple'"],
      [s.http.infer('repeat', [new InferInput('IN', [1], 'INT32').setData(Int32Array.of(1))]), '501', "HTTP end point doesn't support models with decoupled transaction policy"],
      [s.http.infer('simple', [fp32([1, 1], [1])], { parameters: { triton_x: 1 } }), '400', "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified."],
    ];
    for (const [p, status, message] of cases) {
      const e = await httpError(p);
      expect([e.status, e.message.includes(message) ? message : e.message]).toEqual([status, message]);
    }
    const raw: [string, string | Buffer, Record<string, string | number>, number, RegExp][] = [
      ['/v2/models/simple/infer', '{"inputs": [', {}, 400, /^failed to parse the request JSON buffer: /],
      ['/v2/models/simple/infer', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), {}, 400, /not valid UTF-8/],
      ['/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FLOAT","data":[1]}]}', {}, 400, /^invalid datatype 'FLOAT' for input 'INPUT0'$/],
      ['/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP32","data":[1]}]}', {}, 400, /^Unable to parse 'data': Shape does not match true shape of 'data' field$/],
      ['/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":["x"]}]}', {}, 400, /unable to convert "x" to FP32/],
      ['/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32"}]}', {}, 400, /^unable to find data for input tensor 'INPUT0' for model 'simple' in request.$/],
      ['/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","shape":[1,1e12],"datatype":"FP32","data":[]}]}', {}, 400, /more than the server's limit/],
      ['/v2/models/simple/infer', '{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","parameters":{"binary_data_size":4}}]}', { 'inference-header-content-length': 200 }, 400, /larger than the request body/],
      ['/v2/models/simple/versions/x/infer', '{}', {}, 400, /failed to parse model version 'x'/],
      ['/v2/models/simple/infer', 'x', { 'content-encoding': 'gzip' }, 400, /failed to decompress/],
      ['/v2/models/strings/infer', '{"inputs":[{"name":"INPUT0","shape":[1],"datatype":"BYTES","data":[1]}]}', {}, 400, /expected a string/],
    ];
    for (const [path, body, headers, status, message] of raw) {
      const res = await post(path, body, headers);
      expect([res.status, json(res.body).error]).toEqual([status, expect.stringMatching(message)]);
    }
  });

  it('limits body size (also decompressed) and header count', async () => {
    const big = await post('/v2/models/simple/infer', Buffer.alloc(MAX_INPUT + 1, 0x20));
    expect(big.status).toBe(413);
    expect(json(big.body).error).toMatch(/exceeds the server's maximum input size of 1048576 bytes/);
    const bomb = await post('/v2/models/simple/infer', zlib.gzipSync(Buffer.alloc(MAX_INPUT * 4, 0x20)), { 'content-encoding': 'gzip' });
    expect(bomb.status).toBe(413);
    const headers: Record<string, string> = {};
    for (let i = 0; i < 60; i++) headers[`x-h${i}`] = 'v';
    const many = await s.http.request('GET', '/v2/health/live', undefined, headers);
    expect(many.status).toBe(431);
    expect(await s.http.isServerLive()).toBe(true);
  });
});

describe('HTTP repository, shared memory, settings', () => {
  it('indexes, unloads, loads with a config override', async () => {
    const index = await s.http.getModelRepositoryIndex();
    expect(index).toContainEqual({ name: 'simple', version: '1', state: 'READY', reason: '' });
    await s.http.unloadModel('addsub');
    expect(await s.http.isModelReady('addsub')).toBe(false);
    expect((await s.http.getModelRepositoryIndex({ ready: true })).map((m) => m.name)).not.toContain('addsub');
    await s.http.loadModel('addsub');
    expect(await s.http.isModelReady('addsub')).toBe(true);
    const e = await httpError(s.http.loadModel('addsub', { files: { 'file:1/model.onnx': new Uint8Array(2) } }));
    expect(e.status).toBe('501');
    const bad = await post('/v2/repository/models/addsub/load', '{"parameters":{"config":5}}');
    expect([bad.status, json(bad.body).error]).toEqual([400, "the 'config' parameter must be a string holding JSON"]);
  });

  it('shared memory needs --allow-client-shm; CUDA shared memory is unsupported', async () => {
    const e = await httpError(s.http.registerSystemSharedMemory('r', '/nope', 8));
    expect(e.status).toBe('503');
    expect(e.message).toContain('--allow-client-shm');
    expect(await s.http.getSystemSharedMemoryStatus()).toEqual([]);
    const cuda = await httpError(s.http.getCudaSharedMemoryStatus());
    expect(cuda.status).toBe('501');
    await s.http.unregisterSystemSharedMemory();
  });

  it('trace settings (global and per model) and logging', async () => {
    // Triton's HTTP shape: trace_level a list, the other settings strings.
    expect(await s.http.getTraceSettings()).toMatchObject({ trace_level: ['OFF'], trace_rate: '1000', trace_count: '-1', trace_mode: 'triton' });
    expect((await s.http.updateTraceSettings({ trace_rate: '7' }, 'simple'))['trace_rate']).toBe('7');
    expect((await s.http.updateTraceSettings({ trace_rate: null }, 'simple'))['trace_rate']).toBe('1000');
    const bad = await httpError(s.http.updateTraceSettings({ nope: 'x' }));
    expect(bad.status).toBe('400');
    const log = await s.http.getLogSettings();
    expect(log).toMatchObject({ log_info: true, log_warning: true, log_error: true, log_verbose_level: 0, log_format: 'default' });
    expect((await s.http.updateLogSettings({ log_format: 'ISO8601' }))['log_format']).toBe('ISO8601');
    await s.http.updateLogSettings({ log_format: 'default' });
  });
});
