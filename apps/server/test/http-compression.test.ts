/**
 * Triton's response-compression rule, checked with a plain node:http client that, like aiohttp under
 * `tritonclient.http.aio` (auto_decompress=False), sends `Accept-Encoding: gzip, deflate` on every
 * call and only decodes inference replies: every other reply must come back uncompressed.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pickEncoding } from '../src/http/body.ts';
import { startTestServer, type TestServer } from './support/start-server.ts';

let s: TestServer;
let port: number;

beforeAll(async () => {
  s = await startTestServer({ modelControlMode: 'explicit', loadModels: ['*'] }, undefined, ['simple', 'repeat']);
  port = Number(s.httpUrl.split(':')[1]);
});
afterAll(async () => {
  await s?.close();
});

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request, the reply body exactly as it came off the socket (never decoded). */
function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { 'accept-encoding': 'gzip, deflate', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const inferBody = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 3], datatype: 'FP32', data: [1, 2, 3] }] });

describe('HTTP response compression', () => {
  it('compresses a successful inference reply that asked for it', async () => {
    const r = await raw('POST', '/v2/models/simple/infer', inferBody, { 'content-type': 'application/json' });
    expect([r.status, r.headers['content-encoding']]).toEqual([200, 'gzip']);
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(JSON.parse(zlib.gunzipSync(r.body).toString()).outputs[0].data).toEqual([1, 2, 3]);
  });

  it('never compresses metadata, config, statistics, repository, generate or error replies', async () => {
    const calls: Array<[string, string, string | undefined, number]> = [
      ['GET', '/v2', undefined, 200],
      ['GET', '/v2/models/simple', undefined, 200],
      ['GET', '/v2/models/simple/config', undefined, 200],
      ['GET', '/v2/models/simple/stats', undefined, 200],
      ['GET', '/v2/models/stats', undefined, 200],
      ['POST', '/v2/repository/index', '{}', 200],
      ['GET', '/v2/logging', undefined, 200],
      ['GET', '/v2/trace/setting', undefined, 200],
      ['POST', '/v2/models/simple/generate', JSON.stringify({ INPUT0: [1, 2] }), 200],
      ['GET', '/v2/models/nope', undefined, 404],
      ['GET', '/v2/models/simple/ready/x', undefined, 404],
      ['PUT', '/v2', undefined, 405],
      ['POST', '/v2/models/simple/infer', '{"inputs":[{"name":"NOPE","shape":[1,1],"datatype":"FP32","data":[1]}]}', 400],
      ['POST', '/v2/models/nope/infer', inferBody, 404],
      ['POST', '/v2/models/repeat/infer', JSON.stringify({ inputs: [{ name: 'IN', shape: [1], datatype: 'INT32', data: [1] }] }), 501],
    ];
    for (const [method, path, body, status] of calls) {
      const r = await raw(method, path, body, body ? { 'content-type': 'application/json' } : {});
      expect([method, path, r.status, r.headers['content-encoding']]).toEqual([method, path, status, undefined]);
      // The body is plain JSON, readable without decoding.
      expect(() => JSON.parse(r.body.toString('utf8'))).not.toThrow();
    }
  });

  it('picks the encoding by q-weight, as Triton does', async () => {
    expect(pickEncoding('gzip, deflate')).toBe('gzip');
    expect(pickEncoding('deflate, gzip')).toBe('deflate');
    expect(pickEncoding('gzip;q=0.5, deflate')).toBe('deflate');
    expect(pickEncoding('gzip;q=0, identity;q=0')).toBeUndefined();
    expect(pickEncoding('identity, gzip')).toBeUndefined();
    expect(pickEncoding('br')).toBeUndefined();
    expect(pickEncoding('gzip;q=abc, deflate;q=0.1')).toBe('deflate');
    const r = await raw('POST', '/v2/models/simple/infer', inferBody, { 'content-type': 'application/json', 'accept-encoding': 'gzip;q=0.2, deflate;q=0.8' });
    expect(r.headers['content-encoding']).toBe('deflate');
    expect(JSON.parse(zlib.inflateSync(r.body).toString()).outputs[0].data).toEqual([1, 2, 3]);
    const plain = await raw('POST', '/v2/models/simple/infer', inferBody, { 'content-type': 'application/json', 'accept-encoding': 'gzip;q=0' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString()).outputs[0].data).toEqual([1, 2, 3]);
  });
});
