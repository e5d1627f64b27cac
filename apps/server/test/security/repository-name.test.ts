/**
 * Triton's repository API takes no repository name: `/v2/repository/<name>/index|models/...` and
 * gRPC's `repository_name` are refused UNSUPPORTED ("'repository_name' specification is not
 * supported"), for index, load and unload alike. Load and unload ignored the name, so a client
 * naming another repository unloaded (or reloaded) the model this server serves.
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

const MESSAGE = "'repository_name' specification is not supported";

describe('repository API: a repository name is refused, not ignored', () => {
  for (const action of ['unload', 'load'] as const) {
    it(`HTTP POST /v2/repository/elsewhere/models/simple/${action}: 501 with Triton's message, the model untouched`, async () => {
      const res = await fetch(`http://${s.httpUrl}/v2/repository/elsewhere/models/simple/${action}`, { method: 'POST' });
      expect(res.status).toBe(501);
      expect(await res.json()).toEqual({ error: MESSAGE });
      expect(await s.http.isModelReady('simple')).toBe(true);
    });

    it(`gRPC Repository${action === 'load' ? 'ModelLoad' : 'ModelUnload'} with repository_name: UNIMPLEMENTED, the model untouched`, async () => {
      const call = action === 'load' ? s.grpc.loadModel('simple', { repository: 'elsewhere' }) : s.grpc.unloadModel('simple', { repository: 'elsewhere' });
      await expect(call).rejects.toMatchObject({ message: expect.stringContaining(MESSAGE), status: 'StatusCode.UNIMPLEMENTED' });
      expect(await s.grpc.isModelReady('simple')).toBe(true);
    });
  }

  it('the index refuses it too, and without a name every call still works', async () => {
    const res = await fetch(`http://${s.httpUrl}/v2/repository/elsewhere/index`, { method: 'POST' });
    expect(res.status).toBe(501);
    await s.http.unloadModel('simple');
    expect(await s.http.isModelReady('simple')).toBe(false);
    await s.http.loadModel('simple');
    expect(await s.http.isModelReady('simple')).toBe(true);
  });
});
