/**
 * `unload_dependents` is a boolean (Triton: HTTP parses it with AsBool, gRPC takes only bool_param);
 * anything else is refused before anything is unloaded. A string "true" (HTTP) or an int64_param 1
 * (gRPC) read as false would unload the model without the composing models the client asked to
 * unload with it, and tell the client it worked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ modelControlMode: 'explicit', loadModels: ['simple'] }, undefined, ['simple']);
});
afterAll(async () => {
  await s?.close();
});

describe('unload_dependents must be a boolean', () => {
  it('HTTP: "true", 1 or an object is refused 400 naming the parameter; the model stays loaded', async () => {
    for (const [value, shown] of [['true', '"true"'], [1, '1'], [{}, '{}']] as const) {
      const res = await s.http.request('POST', '/v2/repository/models/simple/unload', JSON.stringify({ parameters: { unload_dependents: value } }), {
        'content-type': 'application/json',
      });
      expect([res.status, JSON.parse(res.body.toString()).error]).toEqual([400, `Unable to parse 'unload_dependents': expected a boolean, got ${shown}`]);
      expect(await s.http.isModelReady('simple')).toBe(true);
    }
  });

  it("gRPC: an int64_param or string_param is refused INVALID_ARGUMENT with Triton's message; the model stays loaded", async () => {
    for (const param of [{ int64_param: 1 }, { string_param: 'true' }]) {
      await expect(s.grpc.call('RepositoryModelUnload', { model_name: 'simple', parameters: { unload_dependents: param } })).rejects.toMatchObject({
        status: 'StatusCode.INVALID_ARGUMENT',
        message: "invalid value type for 'unload_dependents' parameter, expected bool_param.",
      });
      expect(await s.grpc.isModelReady('simple')).toBe(true);
    }
  });

  it('a boolean, or no parameter, still unloads', async () => {
    await s.grpc.unloadModel('simple', { unloadDependents: false });
    expect(await s.http.isModelReady('simple')).toBe(false);
    await s.http.loadModel('simple');
    await s.http.unloadModel('simple', { unloadDependents: true });
    expect(await s.http.isModelReady('simple')).toBe(false);
    await s.http.loadModel('simple');
  });
});
