/**
 * Request bodies held in memory are bounded server-wide (`--max-buffered-request-size`, shared with gRPC), not only
 * one by one: a gzip body of 64 KB decompresses to 64 MB under the per-request limit, so many at once
 * (or bare `Content-Length: 67108864` headers that each reserved 64 MB) could exhaust memory. Here the
 * budget is 8 MB so a few requests reach it; past it a request is refused 503 naming the flag, and
 * what each request held comes back when its response is done.
 */
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

const BUDGET = 8 * 1024 * 1024;
let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startTestServer({ maxBufferedRequestSize: BUDGET }, undefined, ['simple']);
  port = Number(s.httpUrl.split(':')[1]);
});
afterAll(async () => {
  await s?.close();
});

/** A gzip binary inference request for `n` FP32 zeros (n * 4 bytes once decompressed). */
function gzipInfer(n: number): Promise<{ status: number; body: string }> {
  const header = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, n], datatype: 'FP32', parameters: { binary_data_size: n * 4 } }] }));
  const body = zlib.gzipSync(Buffer.concat([header, Buffer.alloc(n * 4)]));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v2/models/simple/infer',
        headers: { 'content-encoding': 'gzip', 'inference-header-content-length': header.length, 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.length < 1000 ? c.toString() : ''));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Opens a request declaring `bytes` of body and sends one byte of it. The server answers nothing
 * while it waits for the rest, so 300 ms of silence means it holds the declaration; an answer means
 * it was refused (another test's request held the budget then), and the holder tries again.
 */
async function holdDeclared(bytes: number): Promise<net.Socket> {
  for (let attempt = 0; ; attempt++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let answered = false;
    socket.on('data', () => (answered = true));
    socket.write(`POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n{`);
    await new Promise((done) => setTimeout(done, 300));
    if (!answered) return socket;
    socket.destroy();
    if (attempt === 10) throw new Error('the server kept refusing the holder');
  }
}

const exhausted = `requests held in memory would exceed the server's limit of ${BUDGET} bytes (--max-buffered-request-size); retry later`;

describe('request bodies held at once', () => {
  it('a gzip body decompressing past what is left of the budget is refused 503 naming the flag (not 413: it is under --http-max-input-size)', async () => {
    const r = await gzipInfer((9 * 1024 * 1024) / 4);
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body).error).toBe(exhausted);
  });

  it('a declared Content-Length holds its bytes until the connection ends, even if no byte of the body is sent', async () => {
    const holder = await holdDeclared(6 * 1024 * 1024);
    try {
      // The holder's 6 MB leave 2 MB: a 4 MB body is refused.
      const r = await gzipInfer(1024 * 1024);
      expect(r.status).toBe(503);
      expect(JSON.parse(r.body).error).toBe(exhausted);
      expect((await gzipInfer(1000)).status).toBe(200); // small ones still fit
    } finally {
      holder.destroy();
    }
    // Given back when the connection closes (the server sees the close a moment later).
    let r = await gzipInfer(1024 * 1024);
    for (let i = 0; r.status !== 200 && i < 100; i++) {
      await new Promise((done) => setTimeout(done, 50));
      r = await gzipInfer(1024 * 1024);
    }
    expect(r.status).toBe(200);
  });

  it('every finished request gives its bytes back: 40 requests of 1 MB, 8 at a time, then one needing nearly all 8 MB', async () => {
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 8 }, () => gzipInfer(256 * 1024)));
      for (const r of replies) expect([200, 503]).toContain(r.status);
    }
    expect((await gzipInfer((7 * 1024 * 1024) / 4)).status).toBe(200);
  });

  it('--max-buffered-request-size sets the budget; its default is a quarter of memory', () => {
    expect(parseServeFlags(['--model-repository=m', '--max-buffered-request-size=1048576']).maxBufferedRequestSize).toBe(1 << 20);
    expect(parseServeFlags(['--model-repository=m']).maxBufferedRequestSize).toBeGreaterThan(64 * 1024 * 1024);
    expect(() => parseServeFlags(['--model-repository=m', '--max-buffered-request-size=0'])).toThrow(/max-buffered-request-size/);
  });
});
