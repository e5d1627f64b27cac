/**
 * One large JSON body cannot freeze everyone (parsing 64 MB of JSON takes tens of seconds): JSON has
 * its own, lower limit (`--http-max-json-size`, 16 MB by default; binary tensor data keeps
 * `--http-max-input-size`), and a JSON body above 64 KiB is parsed and converted in a worker thread,
 * never by the main thread's JSON.parse. (How long neighbours wait is measured by bench/json-flood.)
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferInput } from '@tritium/client';
import { DEFAULT_LIMITS } from '../../src/protocol/limits.ts';
import { JsonParser } from '../../src/http/json-parser.ts';
import { parseServeFlags } from '../../src/cli/flags.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

const MAX_JSON = 2 * 1024 * 1024;
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ httpMaxJsonSize: MAX_JSON, httpMaxInputSize: 8 * 1024 * 1024 }, undefined, ['simple', 'strings']);
});
afterAll(async () => {
  await s?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A JSON infer body for `simple` with `n` FP32 values (about 8 bytes each). */
function jsonInfer(n: number): string {
  const data = Array.from({ length: n }, (_, i) => (i % 1000) / 8);
  return JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, n], datatype: 'FP32', data }], outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }] });
}

describe('the JSON size limit', () => {
  it('a JSON body over --http-max-json-size is refused 413 naming the flag, declared or streamed', async () => {
    const body = jsonInfer(400_000);
    expect(body.length).toBeGreaterThan(MAX_JSON);
    const res = await s.http.request('POST', '/v2/models/simple/infer', body, { 'content-type': 'application/json' });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString()).error).toBe(
      `JSON request body of ${body.length} bytes exceeds the server's maximum JSON size of ${MAX_JSON} bytes (--http-max-json-size); send tensors in binary form`,
    );
    const logging = await s.http.request('POST', '/v2/logging', JSON.stringify({ log_info: true, pad: 'x'.repeat(MAX_JSON) }));
    expect(logging.status).toBe(413);
    expect(await s.http.isServerLive()).toBe(true);
  });

  it('the same tensor in binary form (up to --http-max-input-size) is served', async () => {
    const n = 400_000;
    const out = await s.http.infer('simple', [new InferInput('INPUT0', [1, n], 'FP32').setData(new Float32Array(n).fill(0.5))]);
    expect(out.asTypedArray('OUTPUT0', 'FP32').length).toBe(n);
  });

  it('a binary request whose JSON header alone is over the limit is refused before its body is read', async () => {
    const res = await s.http.request('POST', '/v2/models/simple/infer', Buffer.alloc(16), { 'inference-header-content-length': MAX_JSON + 1 });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString()).error).toContain('(--http-max-json-size)');
  });

  it('flag and default', () => {
    expect(DEFAULT_LIMITS.maxJsonBytes).toBe(16 * 1024 * 1024);
    expect(parseServeFlags(['--model-repository=m', '--http-max-json-size=1048576']).httpMaxJsonSize).toBe(1 << 20);
  });
});

describe('large JSON is parsed off the main thread', () => {
  it('a 1.6 MB JSON infer body never reaches the main thread\'s JSON.parse, and answers right', async () => {
    const body = jsonInfer(200_000);
    const parse = vi.spyOn(JSON, 'parse');
    const res = await s.http.request('POST', '/v2/models/simple/infer', body, { 'content-type': 'application/json' });
    const bigParses = parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > 64 * 1024);
    parse.mockRestore();
    expect(res.status).toBe(200);
    expect(bigParses).toEqual([]);
    const head = Number(res.headers['inference-header-content-length']);
    const values = new Float32Array(res.body.buffer.slice(res.body.byteOffset + head, res.body.byteOffset + res.body.length));
    expect(values.length).toBe(200_000);
    expect([values[0], values[1], values[999], values[1000]]).toEqual([0, 0.125, 999 / 8, 0]);
  });

  it('errors found in the worker keep their status and words', async () => {
    const bad = jsonInfer(100_000).replace('"datatype":"FP32"', '"datatype":"FP33"');
    const res = await s.http.request('POST', '/v2/models/simple/infer', bad);
    expect([res.status, JSON.parse(res.body.toString()).error]).toEqual([400, "invalid datatype 'FP33' for input 'INPUT0'"]);
    const mismatch = jsonInfer(100_000).replace('"shape":[1,100000]', '"shape":[1,99999]');
    const r2 = await s.http.request('POST', '/v2/models/simple/infer', mismatch);
    expect([r2.status, JSON.parse(r2.body.toString()).error]).toEqual([400, "Unable to parse 'data': Shape does not match true shape of 'data' field"]);
    const utf8 = Buffer.concat([Buffer.from(jsonInfer(100_000).slice(0, -2)), Buffer.from([0x22, 0xff, 0x22, 0x7d])]);
    const r3 = await s.http.request('POST', '/v2/logging', utf8);
    expect(r3.status).toBe(400);
    expect(JSON.parse(r3.body.toString()).error).toBe('failed to parse the request JSON buffer: The document is not valid UTF-8');
  });

  it('a binary request whose JSON header is large (parsed in the worker) still reads its binary part', async () => {
    const header = Buffer.from(
      JSON.stringify({ id: 'x'.repeat(70_000), inputs: [{ name: 'INPUT0', shape: [1, 4], datatype: 'FP32', parameters: { binary_data_size: 16 } }] }),
    );
    const body = Buffer.concat([header, Buffer.from(Float32Array.of(1, 2, 3, 4).buffer)]);
    const res = await s.http.request('POST', '/v2/models/simple/infer', body, { 'inference-header-content-length': header.length });
    expect(res.status).toBe(200);
    const head = Number(res.headers['inference-header-content-length'] ?? res.body.length);
    const reply = JSON.parse(res.body.subarray(0, head).toString());
    expect(reply.outputs[0].data ?? [...new Float32Array(res.body.buffer.slice(res.body.byteOffset + head, res.body.byteOffset + res.body.length))]).toEqual([1, 2, 3, 4]);
  });

  it('generate bodies take the same path', async () => {
    const values = Array.from({ length: 100_000 }, (_, i) => i % 7);
    const res = await s.http.request('POST', '/v2/models/simple/generate', JSON.stringify({ INPUT0: values }));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString()).OUTPUT0.length).toBe(100_000);
  });
});

describe('JSON shapes that cost far more than their size', () => {
  it('nesting deeper than 80 levels is refused before parsing', async () => {
    const deep = `{"inputs":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const res = await s.http.request('POST', '/v2/models/simple/infer', deep);
    expect([res.status, JSON.parse(res.body.toString()).error]).toEqual([400, 'failed to parse the request JSON buffer: nested deeper than 80 levels']);
    // Brackets inside strings do not count.
    const quoted = JSON.stringify({ log_info: true, note: '['.repeat(500) });
    expect((await s.http.request('POST', '/v2/logging', quoted)).status).toBe(400); // unknown key 'note', not a depth error
    expect(JSON.parse((await s.http.request('POST', '/v2/logging', quoted)).body.toString()).error).toContain("'note'");
  });

  it('a body that needs more memory than the worker may use fails 413; the next parse works', async () => {
    const parser = new JsonParser({ inlineBelowBytes: 0, workerHeapMb: 16, workers: 1 });
    try {
      const many = Buffer.from(`[${'[0],'.repeat(300_000)}[0]]`);
      const e = await parser.parse(many).then(
        () => undefined,
        (err: Error & { httpStatus?: number }) => err,
      );
      expect(e?.httpStatus).toBe(413);
      expect(e?.message).toContain("needs more than the parser's 16 MB");
      expect(await parser.parse(Buffer.from('{"ok":true}'))).toEqual({ ok: true });
    } finally {
      await parser.close();
    }
  });
});
