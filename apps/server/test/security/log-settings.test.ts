/**
 * The CVE-2024-0087 class: `POST /v2/logging {"log_file": ...}` and gRPC LogSettings must not
 * redirect the server's log to a path of the caller's choosing. Refused as Triton does; the other
 * settings are validated and bounded.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServerException } from '@tritium/client';
import { LOG_FILE_UPDATE_MESSAGE } from '../../src/protocol/settings.ts';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startTestServer({}, undefined, ['simple']);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tritium-logfile-'));
});
afterAll(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function errorOf(p: Promise<unknown>): Promise<InferenceServerException> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InferenceServerException);
  return e as InferenceServerException;
}

describe('log file redirection', () => {
  it('HTTP: a log_file change is refused with 501 and Triton\'s message; nothing is written there', async () => {
    const target = path.join(dir, 'http-target');
    const res = await s.http.request('POST', '/v2/logging', JSON.stringify({ log_file: target, log_verbose_level: 1 }), {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(501);
    expect(JSON.parse(res.body.toString())).toEqual({ error: LOG_FILE_UPDATE_MESSAGE });
    // The whole update is refused: verbose logging stayed off, and lines still go to the server's log.
    const settings = await s.http.getLogSettings();
    expect(settings).toMatchObject({ log_file: '', log_verbose_level: 0 });
    await s.http.request('GET', '/v2/models/nope');
    s.server.log.error('a line after the attempt');
    expect(fs.existsSync(target)).toBe(false);
    expect(s.logs()).toContain('a line after the attempt');
  });

  it('HTTP: an empty log_file is refused too (no value may move it); null leaves it alone', async () => {
    const empty = await s.http.request('POST', '/v2/logging', JSON.stringify({ log_file: '' }));
    expect(empty.status).toBe(501);
    const nul = await s.http.request('POST', '/v2/logging', JSON.stringify({ log_file: null, log_info: true }));
    expect(nul.status).toBe(200);
    expect(JSON.parse(nul.body.toString())).toMatchObject({ log_file: '', log_info: true });
  });

  it('gRPC: a log_file setting is refused UNIMPLEMENTED (UNSUPPORTED) with Triton\'s message', async () => {
    const target = path.join(dir, 'grpc-target');
    const e = await errorOf(s.grpc.updateLogSettings({ log_file: target }));
    expect(e.status).toBe('StatusCode.UNIMPLEMENTED');
    expect(e.message).toBe(LOG_FILE_UPDATE_MESSAGE);
    s.server.log.error('another line');
    expect(fs.existsSync(target)).toBe(false);
    expect((await s.grpc.getLogSettings())['log_file']).toBe('');
  });
});

describe('other log settings are validated and bounded', () => {
  it.each([
    [{ log_verbose_level: 1e308 }, "'log_verbose_level': 1e+308"],
    [{ log_verbose_level: -1 }, "'log_verbose_level': -1"],
    [{ log_verbose_level: 2 ** 31 }, 'from 0 to 2147483647'],
    [{ log_verbose_level: 1.5 }, "'log_verbose_level': 1.5"],
    [{ log_verbose_level: '3' }, "expect a uint32 value for logging setting 'log_verbose_level', got '3'"],
    [{ log_info: 'yes' }, "expect a boolean value for logging setting 'log_info'"],
    [{ log_format: 'xml' }, "invalid argument for log_format, got: 'xml'"],
    [{ log_nope: true }, "Logging setting 'log_nope' is not a valid logging setting"],
  ])('HTTP %j → 400 naming the setting and value', async (body, message) => {
    const res = await s.http.request('POST', '/v2/logging', JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).error).toContain(message);
  });

  it('a refused update changes nothing (validation before any change)', async () => {
    const before = await s.http.getLogSettings();
    const res = await s.http.request('POST', '/v2/logging', JSON.stringify({ log_info: false, log_verbose_level: -5 }));
    expect(res.status).toBe(400);
    expect(await s.http.getLogSettings()).toEqual(before);
  });

  it('gRPC bounds the verbose level as HTTP does; a valid level still applies', async () => {
    const e = await errorOf(s.grpc.updateLogSettings({ log_verbose_level: 2 ** 31 }));
    expect(e.status).toBe('StatusCode.INVALID_ARGUMENT');
    expect(e.message).toContain("'log_verbose_level'");
    expect((await s.grpc.updateLogSettings({ log_verbose_level: 2 }))['log_verbose_level']).toBe(2);
    expect((await s.grpc.updateLogSettings({ log_verbose_level: 0 }))['log_verbose_level']).toBe(0);
  });
});
