/**
 * What one gRPC request can make `tritium serve` hold: a message is bounded by `--grpc-max-input-size`
 * (64 MB) on the wire and while it inflates, and request bytes of both transports share one budget
 * (`--max-buffered-request-size`), charged as they arrive. Through a real `tritium serve`: a gzip
 * message of about 256 KB inflating to 256 MiB, a length prefix announcing 1 GB, and a holder that
 * keeps most of a small budget while neighbours on gRPC and HTTP are refused, then served.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { GrpcInferenceServerClient, InferInput } from '@tritium/client';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { frameHeader, gzipBombFrame, inferFrame, MODEL_INFER, rawCall } from '../support/raw-grpc.ts';

const MiB = 1024 * 1024;
const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-grpc-bounds-'));
const repo = path.join(root, 'repo');
mkdirSync(path.join(repo, 'm', '1'), { recursive: true });
writeFileSync(
  path.join(repo, 'm', 'config.pbtxt'),
  `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`,
);

/** The server's peak resident memory so far (VmHWM), in bytes. */
function peakRss(serve: ServeProcess): number {
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${serve.child.pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** A small gRPC infer through the real client: the neighbour that must keep being served. */
async function neighbour(client: GrpcInferenceServerClient, floats = 4): Promise<number> {
  const input = new InferInput('INPUT0', [floats], 'FP32').setData(new Float32Array(floats).fill(1));
  const result = await client.infer('m', [input]);
  return result.asTypedArray('OUTPUT0', 'FP32').length;
}

/** The client's rejection's gRPC status name (`StatusCode.RESOURCE_EXHAUSTED`). */
function grpcStatusOf(e: unknown): string | undefined {
  return (e as { status?: string } | undefined)?.status;
}

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('one gRPC request message, default bounds', () => {
  let serve: ServeProcess;
  let port: number;
  let session: http2.ClientHttp2Session;
  let client: GrpcInferenceServerClient;
  beforeAll(async () => {
    serve = startServeProcess([`--model-repository=${repo}`]);
    ({ grpc: port } = await serve.started);
    session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    client = new GrpcInferenceServerClient(`127.0.0.1:${port}`);
  });
  afterAll(async () => {
    client?.close();
    session?.close();
    await serve?.stop();
  });

  it('a gzip message inflating to 256 MiB is refused RESOURCE_EXHAUSTED once past 64 MB, naming the flag, and the server holds far less than it', async () => {
    const bomb = await gzipBombFrame('m', 256 * MiB);
    expect(bomb.length).toBeLessThan(MiB);
    expect(await neighbour(client)).toBe(4);
    const before = peakRss(serve);
    const call = rawCall(session, MODEL_INFER, 'gzip');
    call.stream.end(bomb);
    expect(await call.status).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      message: `request message decompresses to more than the server's maximum input size of ${64 * MiB} bytes (--grpc-max-input-size)`,
    });
    // Inflated up to the bound (64 MiB) and not beyond: well under the 256 MiB the message holds.
    expect(peakRss(serve) - before).toBeLessThan(160 * MiB);
    expect(await neighbour(client)).toBe(4);
  });

  it('a length prefix announcing 1 GB is refused at once, before any of its bytes arrive', async () => {
    const call = rawCall(session, MODEL_INFER);
    call.stream.write(frameHeader(1 << 30));
    expect(await call.status).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      message: `request message of ${1 << 30} bytes exceeds the server's maximum input size of ${64 * MiB} bytes (--grpc-max-input-size)`,
    });
    call.stream.destroy();
  });

  it('a message within the bound, compressed or not, is served', async () => {
    expect(await neighbour(client, 4 * MiB)).toBe(4 * MiB);
    const call = rawCall(session, MODEL_INFER, 'gzip');
    call.stream.end(await gzipBombFrame('m', 8 * MiB));
    expect((await call.status).code).toBe(GrpcStatus.OK);
  });
});

describe('request bytes held at once, HTTP and gRPC together', () => {
  const BUDGET = 8 * MiB;
  let serve: ServeProcess;
  let ports: { http: number; grpc: number; metrics: number };
  let client: GrpcInferenceServerClient;
  beforeAll(async () => {
    serve = startServeProcess([`--model-repository=${repo}`, `--max-buffered-request-size=${BUDGET}`]);
    ports = await serve.started;
    client = new GrpcInferenceServerClient(`127.0.0.1:${ports.grpc}`);
  });
  afterAll(async () => {
    client?.close();
    await serve?.stop();
  });

  const exhausted = `requests held in memory would exceed the server's limit of ${BUDGET} bytes (--max-buffered-request-size); retry later`;

  /** The server's tritium_request_bytes_held gauge. */
  async function bytesHeld(): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
    return Number(/^tritium_request_bytes_held (\d+)$/m.exec(text)?.[1]);
  }

  /** An HTTP binary infer of `floats` FP32 zeros. */
  async function httpInfer(floats: number): Promise<{ status: number; error?: string }> {
    const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [floats], datatype: 'FP32', parameters: { binary_data_size: floats * 4 } }] }));
    const r = await fetch(`http://127.0.0.1:${ports.http}/v2/models/m/infer`, {
      method: 'POST',
      headers: { 'inference-header-content-length': String(header.length) },
      body: Buffer.concat([header, Buffer.alloc(floats * 4)]),
    });
    const text = await r.text();
    return r.status === 200 ? { status: 200 } : { status: r.status, error: (JSON.parse(text) as { error: string }).error };
  }

  it('a gRPC message still arriving holds its bytes: neighbours past what is left are refused on both transports, small ones served, all served once it goes', async () => {
    // 6 MiB of a 7 MiB message sent, the rest never: the server holds what arrived.
    const session = http2.connect(`http://127.0.0.1:${ports.grpc}`);
    session.on('error', () => undefined);
    const holder = rawCall(session, MODEL_INFER);
    const frame = inferFrame('m', (7 * MiB) / 4);
    holder.stream.write(frame.subarray(0, 6 * MiB));
    // Once the server holds all 6 MiB (its gauge says so), a 3 MiB request no longer fits; probing
    // sooner could make the holder's own last bytes the ones refused.
    while ((await bytesHeld()) < 6 * MiB) await new Promise((r) => setTimeout(r, 20));
    const refused = await neighbour(client, (3 * MiB) / 4).catch((e: unknown) => e);
    expect(grpcStatusOf(refused)).toBe('StatusCode.RESOURCE_EXHAUSTED');
    expect((refused as Error).message).toContain(exhausted);
    expect(await httpInfer((3 * MiB) / 4)).toEqual({ status: 503, error: exhausted });
    expect(await neighbour(client)).toBe(4);
    expect((await httpInfer(4)).status).toBe(200);
    session.destroy();
    // Given back when the holder's call ends (the server sees the close a moment later).
    while ((await bytesHeld()) > 0) await new Promise((r) => setTimeout(r, 20));
    expect(await neighbour(client, (3 * MiB) / 4)).toBe((3 * MiB) / 4);
    expect((await httpInfer((3 * MiB) / 4)).status).toBe(200);
  });

  it('a stream gives back each request once answered: 24 requests of 1 MiB on one stream (3 times the budget) are all served', async () => {
    const stream = new GrpcInferenceServerClient(`127.0.0.1:${ports.grpc}`);
    try {
      const answers: string[] = [];
      const done = new Promise<void>((resolve) => {
        stream.startStream((result, error) => {
          answers.push(error ? error.message : 'ok');
          if (answers.length === 24) resolve();
        });
      });
      for (let i = 0; i < 24; i++) {
        stream.asyncStreamInfer('m', [new InferInput('INPUT0', [MiB / 4], 'FP32').setData(new Float32Array(MiB / 4))]);
        // One at a time: the budget is what they hold together, which a burst of 24 would pass.
        while (answers.length <= i) await new Promise((r) => setTimeout(r, 5));
      }
      await done;
      expect(answers).toEqual(Array(24).fill('ok'));
    } finally {
      await stream.stopStream();
      stream.close();
    }
  });
});

describe('flags', () => {
  it('--grpc-max-input-size (64 MB) and --max-buffered-request-size (a quarter of memory; also --http-max-buffered-body-size)', () => {
    const defaults = parseServeFlags(['--model-repository=m']);
    expect(defaults.grpcMaxInputSize).toBe(64 * MiB);
    expect(defaults.maxBufferedRequestSize).toBeGreaterThan(64 * MiB);
    const set = parseServeFlags(['--model-repository=m', '--grpc-max-input-size=1048576', '--max-buffered-request-size=2097152']);
    expect([set.grpcMaxInputSize, set.maxBufferedRequestSize]).toEqual([MiB, 2 * MiB]);
    expect(parseServeFlags(['--model-repository=m', '--http-max-buffered-body-size=3145728']).maxBufferedRequestSize).toBe(3 * MiB);
    expect(() => parseServeFlags(['--model-repository=m', '--grpc-max-input-size=0'])).toThrow(/grpc-max-input-size/);
  });
});
