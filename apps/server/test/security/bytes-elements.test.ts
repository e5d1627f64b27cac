/**
 * A BYTES tensor costs the server memory in proportion to its bytes, however many elements it
 * holds. A request of millions of zero-length elements is a few bytes per element on the wire (4 in
 * HTTP's binary form, 2 in gRPC's `bytes_contents`); an object per element costs a hundred. Here
 * `tritium serve` (a real process) takes 4M-element requests over HTTP and gRPC, and answers one
 * as JSON: its resident memory may grow by a small multiple of the request's size (the body, its
 * packed copy, the copy the model's worker gets), never by an object per element, and a neighbour
 * asking meanwhile is answered. (How long the neighbour waits is the attack bench's to measure.)
 */
import http from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROCESS_MEMORY_UNAVAILABLE, peakRssDuring, rssMiB } from '../support/process-memory.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

const ELEMENTS = 4_000_000;
/** What one of these requests may add to the server's resident memory. */
const GROWTH_BOUND_MIB = 128;

const MODELS: Record<string, { config: string; model: string }> = {
  text_count: {
    config: `backend: "python"
max_batch_size: 0
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "N" data_type: TYPE_INT64 dims: [ 1 ] } ]`,
    model: `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('N', BigInt64Array.of(BigInt(r.inputs()[0]!.shape[0]!)), [1])]));
  }
}`,
  },
  text_echo: {
    config: `backend: "python"
max_batch_size: 0
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ -1 ] } ]`,
    model: `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('OUT', r.inputs()[0]!.data, r.inputs()[0]!.shape, 'BYTES')]));
  }
}`,
  },
  neighbour: {
    config: `backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ -1 ] } ]`,
    model: `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('Y', r.inputs()[0]!.data, r.inputs()[0]!.shape)]));
  }
}`,
  },
};

let repo: string;
let serve: ServeProcess;
let ports: { http: number; grpc: number };
let grpc: Client;

beforeAll(async () => {
  if (PROCESS_MEMORY_UNAVAILABLE) return;
  repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-bytes-elements-'));
  for (const [name, m] of Object.entries(MODELS)) {
    mkdirSync(path.join(repo, name, '1'), { recursive: true });
    writeFileSync(path.join(repo, name, 'config.pbtxt'), `name: "${name}"\n${m.config}\n`);
    writeFileSync(path.join(repo, name, '1', 'model.ts'), m.model);
  }
  serve = startServeProcess([`--model-repository=${repo}`]);
  serve.started.catch(() => undefined);
  const started = await Promise.race([serve.started, serve.exited.then(() => undefined)]);
  if (!started) throw new Error(serve.log());
  ports = { http: started.http, grpc: started.grpc };
  await waitReady();
  grpc = new Client(`127.0.0.1:${ports.grpc}`, credentials.createInsecure());
}, 120_000);
afterAll(async () => {
  grpc?.close();
  await serve?.stop();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

function post(pathname: string, body: Buffer, headers: Record<string, string | number> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: ports.http, method: 'POST', path: pathname, headers: { 'content-length': body.length, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function waitReady(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await new Promise<boolean>((resolve) =>
      http.get(`http://127.0.0.1:${ports.http}/v2/health/ready`, (res) => (res.resume(), resolve(res.statusCode === 200))).on('error', () => resolve(false)),
    );
    if (ok) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`the server never became ready:\n${serve.log()}`);
}

/** A binary HTTP request for `model` whose TEXT input holds `n` zero-length elements (4 bytes each). */
function binaryBytesRequest(model: string, n: number, outputs?: unknown[]): Promise<{ status: number; body: Buffer }> {
  const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [n], parameters: { binary_data_size: 4 * n } }], ...(outputs ? { outputs } : {}) }));
  return post(`/v2/models/${model}/infer`, Buffer.concat([header, Buffer.alloc(4 * n)]), { 'inference-header-content-length': header.length });
}

function neighbour(): Promise<number> {
  const body = Buffer.from(JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape: [2], data: [1, 2] }] }));
  return post('/v2/models/neighbour/infer', body, { 'content-type': 'application/json' }).then((r) => r.status);
}

const varint = (n: number): Buffer => {
  const out: number[] = [];
  for (; n > 127; n = Math.floor(n / 128)) out.push((n & 127) | 128);
  out.push(n);
  return Buffer.from(out);
};
const field = (n: number, payload: Buffer): Buffer => Buffer.concat([varint((n << 3) | 2), varint(payload.length), payload]);

/** ModelInferRequest for text_count with `n` empty `bytes_contents` entries: 2 bytes each on the wire. */
function grpcBytesContents(n: number): Buffer {
  const entries = Buffer.alloc(2 * n);
  for (let i = 0; i < n; i++) entries[2 * i] = 0x42; // field 8, length-delimited, length 0
  const tensor = Buffer.concat([field(1, Buffer.from('TEXT')), field(2, Buffer.from('BYTES')), field(3, varint(n)), field(5, entries)]);
  return Buffer.concat([field(1, Buffer.from('text_count')), field(5, tensor)]);
}

/** Runs `attack` beside a neighbour's request; returns what the server's RSS grew by at its highest (MiB) and the neighbour's status. */
async function growthDuring<T>(attack: () => Promise<T>): Promise<{ result: T; growthMiB: number; neighbourStatus: number }> {
  const pid = serve.child.pid!;
  const base = rssMiB(pid);
  const { result, peakMiB } = await peakRssDuring(pid, async () => {
    const [r, status] = await Promise.all([attack(), neighbour()]);
    return { r, status };
  });
  return { result: result.r, growthMiB: peakMiB - base, neighbourStatus: result.status };
}

describe.skipIf(PROCESS_MEMORY_UNAVAILABLE)('BYTES tensors of millions of elements', () => {
  if (PROCESS_MEMORY_UNAVAILABLE) console.log(`[bytes-elements.test] skipped: ${PROCESS_MEMORY_UNAVAILABLE}`);

  it(`HTTP binary: ${ELEMENTS} empty elements (16 MB) are served within ${GROWTH_BOUND_MIB} MiB of growth`, async () => {
    const { result, growthMiB, neighbourStatus } = await growthDuring(() => binaryBytesRequest('text_count', ELEMENTS));
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body.toString()).outputs[0].data).toEqual([ELEMENTS]);
    expect(neighbourStatus).toBe(200);
    expect(growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
  }, 60_000);

  it(`gRPC bytes_contents: ${ELEMENTS} empty entries (8 MB) are served within ${GROWTH_BOUND_MIB} MiB of growth`, async () => {
    const { result, growthMiB, neighbourStatus } = await growthDuring(
      () =>
        new Promise<Buffer>((resolve, reject) =>
          grpc.makeUnaryRequest('/inference.GRPCInferenceService/ModelInfer', (b: Buffer) => b, (b: Buffer) => b, grpcBytesContents(ELEMENTS), new Metadata(), (e, r) =>
            e ? reject(e) : resolve(r!),
          ),
        ),
    );
    // raw_output_contents[0] (field 6) holds N as an INT64.
    expect(result.readBigInt64LE(result.length - 8)).toBe(BigInt(ELEMENTS));
    expect(neighbourStatus).toBe(200);
    expect(growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
  }, 60_000);

  it(`a JSON response of ${ELEMENTS} BYTES elements is written from their bytes within ${GROWTH_BOUND_MIB} MiB of growth`, async () => {
    const { result, growthMiB, neighbourStatus } = await growthDuring(() => binaryBytesRequest('text_echo', ELEMENTS, [{ name: 'OUT', parameters: { binary_data: false } }]));
    expect(result.status).toBe(200);
    const data = JSON.parse(result.body.toString()).outputs[0].data as string[];
    expect(data.length).toBe(ELEMENTS);
    expect(data.every((s) => s === '')).toBe(true);
    expect(neighbourStatus).toBe(200);
    expect(growthMiB).toBeLessThan(GROWTH_BOUND_MIB);
  }, 60_000);
});
