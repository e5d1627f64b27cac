/**
 * Connections cannot use up the server's descriptors: HTTP and gRPC each hold at most their cap
 * (`--http-max-connections`, `--grpc-max-connections`), both lowered to fit below `ulimit -n` with a
 * quarter kept for the rest, and a gRPC connection that starts no call within
 * `--grpc-first-request-timeout-secs` is closed. Through a real `tritium serve` run under
 * `ulimit -n 512` (caps of 64 each), flooded by 600 idle gRPC connections (HTTP/2 preface only):
 * HTTP, metrics and the health port keep answering, and once the flood is closed gRPC serves again.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, InferInput } from '@tritium/client';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { planConnections } from '../../src/protocol/connection-plan.ts';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';
import { makeTestPki } from '../support/certificates.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-connections-'));
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
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The HTTP/2 client preface and an empty SETTINGS frame: a gRPC connection that never calls. */
const PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);

interface Flood {
  readonly sockets: net.Socket[];
  closed(): number;
}

async function flood(port: number, n: number): Promise<Flood> {
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect(port, '127.0.0.1');
          s.on('error', () => undefined);
          s.once('close', () => closed++);
          s.once('connect', () => s.write(PREFACE));
          s.once('connect', () => resolve(s));
          s.once('close', () => resolve(s));
        }),
    ),
  );
  return { sockets, closed: () => closed };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 25));
}

async function httpInfer(port: number): Promise<number> {
  const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [4], datatype: 'FP32', parameters: { binary_data_size: 16 } }] }));
  const r = await fetch(`http://127.0.0.1:${port}/v2/models/m/infer`, {
    method: 'POST',
    headers: { 'inference-header-content-length': String(header.length), connection: 'close' },
    body: Buffer.concat([header, Buffer.alloc(16)]),
  });
  await r.arrayBuffer();
  return r.status;
}

async function grpcInfer(port: number): Promise<number> {
  const client = new GrpcInferenceServerClient(`127.0.0.1:${port}`);
  try {
    const r = await client.infer('m', [new InferInput('INPUT0', [4], 'FP32').setData(new Float32Array(4))]);
    return r.asTypedArray('OUTPUT0', 'FP32').length;
  } finally {
    client.close();
  }
}

describe('descriptors under a flood of idle gRPC connections (ulimit -n 512)', () => {
  let serve: ServeProcess;
  let ports: { http: number; grpc: number; metrics: number };
  let health: number;
  beforeAll(async () => {
    serve = startServeProcess([`--model-repository=${repo}`, '--health-port=0', '--health-address=127.0.0.1', '--grpc-first-request-timeout-secs=2'], process.env, 512);
    ports = await serve.started;
    await until(() => /Started Health Service at 127\.0\.0\.1:\d+/.test(serve.log()));
    health = Number(/Started Health Service at 127\.0\.0\.1:(\d+)/.exec(serve.log())![1]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('600 idle gRPC connections: 64 are held, the rest closed at once; HTTP, metrics and health answer; then the idle ones are closed and gRPC serves', async () => {
    const f = await flood(ports.grpc, 600);
    try {
      // Every connection past the cap is closed on accept.
      await until(() => f.closed() >= 600 - 64);
      expect(await httpInfer(ports.http)).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
      expect(metrics).toMatch(/^tritium_open_connections\{listener="grpc"\} (6[0-4]|[1-5]\d|\d)$/m);
      expect((await fetch(`http://127.0.0.1:${health}/v2/health/ready`)).status).toBe(200);
      // No call within 2 s: the server closes the ones it held.
      await until(() => f.closed() === 600);
      expect(await grpcInfer(ports.grpc)).toBe(4);
    } finally {
      for (const s of f.sockets) s.destroy();
    }
    expect(serve.log()).toContain('serving at most 64 HTTP and 64 gRPC connections (--http-max-connections 10000, --grpc-max-connections 10000)');
  });

  it('a connection that has made a call is not closed by the first-request timeout', async () => {
    const session = http2.connect(`http://127.0.0.1:${ports.grpc}`);
    session.on('error', () => undefined);
    let closed = false;
    session.once('close', () => (closed = true));
    const call = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ServerLive', 'content-type': 'application/grpc', te: 'trailers' });
    call.end(Buffer.alloc(5));
    call.resume();
    await new Promise((r) => call.once('close', r));
    // Past the 2 s timeout, the connection is still there.
    await new Promise((r) => setTimeout(r, 3000));
    expect(closed).toBe(false);
    session.close();
  });
});

describe('the first-request timeout over TLS', () => {
  it('closes a connection stuck before its handshake and one that completed it but never called', async () => {
    const pki = makeTestPki();
    const serve = startServeProcess([
      `--model-repository=${repo}`,
      '--grpc-use-ssl=true',
      `--grpc-server-cert=${pki.files.serverCert}`,
      `--grpc-server-key=${pki.files.serverKey}`,
      '--grpc-first-request-timeout-secs=1',
    ]);
    try {
      const { grpc } = await serve.started;
      const silent = net.connect(grpc, '127.0.0.1');
      silent.on('error', () => undefined);
      const shook = tls.connect({ port: grpc, host: '127.0.0.1', ca: readFileSync(pki.files.caCert), ALPNProtocols: ['h2'] });
      shook.on('error', () => undefined);
      await new Promise((r) => shook.once('secureConnect', r));
      shook.write(PREFACE);
      const closed = (s: net.Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
      await Promise.all([closed(silent), closed(shook)]);
    } finally {
      await serve.stop();
      pki.remove();
    }
  });
});

describe('connection caps and the descriptor limit', () => {
  it('caps that fit are kept; more are lowered in proportion below the limit less a quarter (and the two small listeners)', () => {
    expect(planConnections({ http: 10_000, grpc: 10_000 }, 1_048_576)).toEqual({ http: 10_000, grpc: 10_000 });
    const tight = planConnections({ http: 10_000, grpc: 10_000 }, 20_000);
    expect([tight.http, tight.grpc, tight.note?.warn]).toEqual([7436, 7436, false]);
    expect(planConnections({ http: 3000, grpc: 1000 }, 4096)).toMatchObject({ http: 2208, grpc: 736, note: { warn: true } });
    expect(planConnections({ http: 10_000, grpc: 0 }, 1024)).toMatchObject({ http: 640, grpc: 0 });
    expect(planConnections({ http: 10_000, grpc: 10_000 }, undefined)).toEqual({ http: 10_000, grpc: 10_000 });
  });

  it('--grpc-max-connections (10000) and --grpc-first-request-timeout-secs (10)', () => {
    const defaults = parseServeFlags(['--model-repository=m']);
    expect([defaults.grpcMaxConnections, defaults.grpcFirstRequestTimeoutSecs]).toEqual([10_000, 10]);
    const set = parseServeFlags(['--model-repository=m', '--grpc-max-connections=5', '--grpc-first-request-timeout-secs=3']);
    expect([set.grpcMaxConnections, set.grpcFirstRequestTimeoutSecs]).toEqual([5, 3]);
    expect(() => parseServeFlags(['--model-repository=m', '--grpc-max-connections=0'])).toThrow(/grpc-max-connections/);
  });
});
