/**
 * Slow clients: a client that trickles its headers or body holds its connection only as long as
 * `--http-headers-timeout-secs` and `--http-request-timeout-secs` allow, and `--http-max-connections`
 * bounds how many it holds (short values here; the defaults are 60 s, 60 s and 10000). Waiting for
 * a slow model does not count against the client.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferInput } from '@tritium/client';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { defaultServeOptions } from '../../src/cli/serve-options.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
let capped: TestServer;

beforeAll(async () => {
  s = await startTestServer({ httpConnections: { headersTimeoutMs: 1000, requestTimeoutMs: 1500, maxConnections: 100 } }, undefined, ['simple', 'slow']);
  capped = await startTestServer({ httpConnections: { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, maxConnections: 2 } }, undefined, ['simple']);
});
afterAll(async () => {
  await s?.close();
  await capped?.close();
});

/** Opens a raw connection, writes `first`, and resolves with what the server sent before closing, and when. */
function rawSession(port: number, first: string): { closed: Promise<{ text: string; ms: number }>; socket: net.Socket } {
  const socket = net.connect(port, '127.0.0.1');
  const started = Date.now();
  let text = '';
  socket.on('data', (c: Buffer) => (text += c.toString()));
  socket.on('error', () => {});
  socket.write(first);
  const closed = new Promise<{ text: string; ms: number }>((resolve) => socket.once('close', () => resolve({ text, ms: Date.now() - started })));
  return { closed, socket };
}

const port = (t: TestServer) => Number(t.httpUrl.split(':')[1]);

describe('request timeouts', () => {
  it('headers that never end: 408 and the connection closes', async () => {
    const { closed } = rawSession(port(s), 'GET /v2/health/ready HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n');
    const { text } = await closed;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a body that trickles past the request timeout: 408, the connection closes, nothing reaches the model', async () => {
    const body = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP32', data: [1, 2] }] });
    const session = rawSession(
      port(s),
      `POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    const trickle = setInterval(() => session.socket.write(' '), 300);
    try {
      const { text } = await session.closed;
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
    expect(s.api.statistics('simple')[0]!.inference_stats.success.count).toBe(0);
  });

  it('a model slower than the request timeout still answers (the timeout covers receiving the request only)', async () => {
    const out = await s.http.infer('slow', [new InferInput('INPUT0', [2], 'FP32').setData(Float32Array.of(7, 8))], { parameters: { fault: 'delay:2500' } });
    expect(Array.from(out.asTypedArray('OUTPUT0', 'FP32'))).toEqual([7, 8]);
  });
});

describe('connection cap', () => {
  it('connections past --http-max-connections are closed at once; a freed slot serves again', async () => {
    // Two keep-alive connections, each answered once (so the server has accepted both), then held.
    const holders = [0, 1].map(() => net.connect(port(capped), '127.0.0.1'));
    await Promise.all(
      holders.map(
        (h) =>
          new Promise((resolve) => {
            h.once('data', resolve);
            h.write('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n');
          }),
      ),
    );
    const refused = await rawSession(port(capped), 'GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n').closed;
    expect(refused.text).toBe('');
    holders[0]!.destroy();
    // The server sees the close asynchronously: try until the slot is free.
    let answer = '';
    for (let i = 0; i < 100 && !answer.startsWith('HTTP/1.1 200'); i++) {
      answer = (await rawSession(port(capped), 'GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n').closed).text;
      if (!answer) await new Promise((r) => setTimeout(r, 50));
    }
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    holders[1]!.destroy();
  });
});

describe('accept backlog (hole 9)', () => {
  it('the HTTP listener asks for an accept queue as deep as the connection cap, not Node\'s 511', async () => {
    // With 511, 2000 clients connecting at once overflowed the kernel's accept queue: SYNs were
    // dropped and health probes waited for retransmits (1 s, 3 s, 7 s) until they timed out.
    // bench/overload.bench.ts shows the effect (kernel ListenOverflows); here, what is asked for.
    const listen = vi.spyOn(http.Server.prototype, 'listen');
    const t = await startTestServer({ httpConnections: { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, maxConnections: 3000 } }, undefined, ['simple']);
    try {
      const options = listen.mock.calls.map((c) => c[0]).find((o) => typeof o === 'object' && o !== null && 'backlog' in o) as { backlog: number } | undefined;
      expect(options?.backlog).toBe(3000);
    } finally {
      listen.mockRestore();
      await t.close();
    }
  });
});

describe('flags', () => {
  it('defaults: 60 s for headers and the whole request, 10000 connections', () => {
    expect(defaultServeOptions().httpConnections).toEqual({ headersTimeoutMs: 60_000, requestTimeoutMs: 60_000, maxConnections: 10_000 });
  });
  it('--http-headers-timeout-secs, --http-request-timeout-secs, --http-max-connections', () => {
    const o = parseServeFlags(['--model-repository=m', '--http-headers-timeout-secs=5', '--http-request-timeout-secs', '120', '--http-max-connections=64']);
    expect(o.httpConnections).toEqual({ headersTimeoutMs: 5000, requestTimeoutMs: 120_000, maxConnections: 64 });
    expect(() => parseServeFlags(['--model-repository=m', '--http-max-connections=0'])).toThrow('invalid value for --http-max-connections');
  });
});
