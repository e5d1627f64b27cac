/**
 * Setting names come from the request: a name that is a member of Object.prototype ('constructor',
 * '__proto__', 'toString') is an unknown setting like any other. The lookups found the prototype's
 * members: a trace update `{"constructor": "5"}` failed 500 'function is not iterable' (gRPC
 * INTERNAL), `{"toString": null}` answered 200, and the log settings answered
 * "expect a function Object() { [native code] } value".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, undefined, []);
});
afterAll(async () => {
  await s?.close();
});

const post = async (route: string, body: string) => {
  const res = await s.http.request('POST', route, body, { 'content-type': 'application/json' });
  return { status: res.status, error: (JSON.parse(res.body.toString()) as { error?: string }).error };
};

const KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];

describe('trace and log setting names from Object.prototype', () => {
  it('HTTP trace setting: 400 naming the unknown setting, nothing changed', async () => {
    const before = await s.http.getTraceSettings();
    for (const key of KEYS) {
      for (const value of ['"5"', 'null', '["5"]']) {
        const r = await post('/v2/trace/setting', `{"${key}": ${value}}`);
        expect(r).toEqual({ status: 400, error: `unknown trace setting ${key} (expected trace_level, trace_rate, trace_count or log_frequency)` });
      }
    }
    expect(await s.http.getTraceSettings()).toEqual(before);
  });

  it('gRPC trace setting: INVALID_ARGUMENT, not INTERNAL', async () => {
    for (const key of ['constructor', 'toString']) {
      await expect(s.grpc.updateTraceSettings({ [key]: ['5'] })).rejects.toMatchObject({
        status: 'StatusCode.INVALID_ARGUMENT',
        message: expect.stringContaining(`unknown trace setting ${key}`),
      });
    }
  });

  it('log settings, HTTP and gRPC: "not a valid logging setting"', async () => {
    for (const key of KEYS) {
      const r = await post('/v2/logging', `{"${key}": true}`);
      expect(r).toEqual({ status: 400, error: `Logging setting '${key}' is not a valid logging setting` });
    }
    await expect(s.grpc.updateLogSettings({ constructor: true })).rejects.toMatchObject({
      status: 'StatusCode.INVALID_ARGUMENT',
      message: "Logging setting 'constructor' is not a valid logging setting",
    });
  });
});
