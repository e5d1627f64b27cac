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

/** Opens `n` idle TCP connections one after another (the server accepts them in that order). */
async function idleConnections(port: number, n: number): Promise<{ sockets: net.Socket[]; closed: boolean[] }> {
  const sockets: net.Socket[] = [];
  const closed: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    s.once('close', () => (closed[i] = true));
    closed[i] = false;
    sockets.push(s);
    await new Promise((r) => s.once('connect', r));
  }
  return { sockets, closed };
}

/** One request on an open connection; resolves with the response's status line. */
function statusLine(s: net.Socket, route: string): Promise<string> {
  return new Promise((resolve) => {
    s.once('data', (c: Buffer) => resolve(c.toString().split('\r\n')[0]!));
    s.write(`GET ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  });
}

describe('--metrics-max-connections and --health-max-connections', () => {
  it('the metrics listener holds 3 and the health listener 2 idle connections; the next one is closed on accept; those held are served', async () => {
    const serve = startServeProcess([`--model-repository=${repo}`, '--metrics-max-connections=3', '--health-port=0', '--health-address=127.0.0.1', '--health-max-connections=2']);
    try {
      const { metrics } = await serve.started;
      await until(() => /Started Health Service at 127\.0\.0\.1:\d+/.test(serve.log()));
      const health = Number(/Started Health Service at 127\.0\.0\.1:(\d+)/.exec(serve.log())![1]);
      for (const [port, cap, route] of [
        [metrics, 3, '/metrics'],
        [health, 2, '/v2/health/live'],
      ] as const) {
        const c = await idleConnections(port, cap + 1);
        try {
          await until(() => c.closed[cap]!);
          expect(c.closed).toEqual([...Array<boolean>(cap).fill(false), true]);
          for (const s of c.sockets.slice(0, cap)) expect(await statusLine(s, route)).toBe('HTTP/1.1 200 OK');
        } finally {
          for (const s of c.sockets) s.destroy();
        }
      }
    } finally {
      await serve.stop();
    }
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
    const small = { metrics: 64, health: 64 };
    expect(planConnections({ http: 10_000, grpc: 10_000, ...small }, 1_048_576)).toEqual({ http: 10_000, grpc: 10_000, ...small });
    const tight = planConnections({ http: 10_000, grpc: 10_000, ...small }, 20_000);
    expect([tight.http, tight.grpc, tight.note?.warn]).toEqual([7436, 7436, false]);
    expect(planConnections({ http: 3000, grpc: 1000, ...small }, 4096)).toMatchObject({ http: 2208, grpc: 736, note: { warn: true } });
    expect(planConnections({ http: 10_000, grpc: 0, ...small }, 1024)).toMatchObject({ http: 640, grpc: 0 });
    expect(planConnections({ http: 10_000, grpc: 10_000, ...small }, undefined)).toEqual({ http: 10_000, grpc: 10_000, ...small });
    // A listener that is off keeps no descriptors.
    expect(planConnections({ http: 10_000, grpc: 0, metrics: 64, health: 0 }, 1024)).toMatchObject({ http: 704, metrics: 64, health: 0 });
  });

  it('metrics and health caps past half of what is left are lowered in proportion, and the log names their flags', () => {
    const plan = planConnections({ http: 10_000, grpc: 10_000, metrics: 3000, health: 1000 }, 4096);
    // 4096 - 1024 kept = 3072: metrics and health get 1536 of it, HTTP and gRPC the other 1536.
    expect(plan).toMatchObject({ metrics: 1152, health: 384, http: 768, grpc: 768, note: { warn: true } });
    expect(plan.note!.message).toBe(
      'serving at most 768 HTTP and 768 gRPC and 1152 metrics and 384 health connections (--http-max-connections 10000, --grpc-max-connections 10000, ' +
        '--metrics-max-connections 3000, --health-max-connections 1000): the process may open 4096 descriptors (ulimit -n), 2560 of them kept for models, files, metrics and health; raise the limit to serve more',
    );
  });

  it('--grpc-max-connections (10000) and --grpc-first-request-timeout-secs (10)', () => {
    const defaults = parseServeFlags(['--model-repository=m']);
    expect([defaults.grpcMaxConnections, defaults.grpcFirstRequestTimeoutSecs]).toEqual([10_000, 10]);
    const set = parseServeFlags(['--model-repository=m', '--grpc-max-connections=5', '--grpc-first-request-timeout-secs=3']);
    expect([set.grpcMaxConnections, set.grpcFirstRequestTimeoutSecs]).toEqual([5, 3]);
    expect(() => parseServeFlags(['--model-repository=m', '--grpc-max-connections=0'])).toThrow(/grpc-max-connections/);
  });

  it('--metrics-max-connections and --health-max-connections (64 each)', () => {
    const defaults = parseServeFlags(['--model-repository=m']);
    expect([defaults.metricsMaxConnections, defaults.healthMaxConnections]).toEqual([64, 64]);
    const set = parseServeFlags(['--model-repository=m', '--metrics-max-connections=3', '--health-max-connections=2']);
    expect([set.metricsMaxConnections, set.healthMaxConnections]).toEqual([3, 2]);
    expect(() => parseServeFlags(['--model-repository=m', '--metrics-max-connections=0'])).toThrow(/metrics-max-connections/);
    expect(() => parseServeFlags(['--model-repository=m', '--health-max-connections=x'])).toThrow(/health-max-connections/);
  });
});
