/**
 * A model.ts's own `isReady()` feeds readiness, as an operator sees it through `tritium serve`:
 * while it answers false the model is not ready (`/v2/models/m/ready` 400, the server's
 * `/v2/health/ready` 400, gRPC ModelReady false) and its requests fail 503 saying why; once it
 * answers true again the model serves again; an `isReady()` that does not answer in time counts as
 * not ready. The log says each change once. The model reads its answer from files the test writes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { grpc } from '@tritium/client';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const repo = mkdtempSync(path.join(tmpdir(), 'tritium-is-ready-'));
const dir = path.join(repo, 'flaky');
let server: ServeProcess | undefined;
afterAll(async () => {
  await server?.stop(5000);
  rmSync(repo, { recursive: true, force: true });
});

mkdirSync(path.join(dir, '1'), { recursive: true });
writeFileSync(
  path.join(dir, 'config.pbtxt'),
  `name: "flaky"
backend: "python"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters { key: "tritium.ready_poll_ms" value: { string_value: "100" } }
parameters { key: "tritium.ready_timeout_ms" value: { string_value: "100" } }
`,
);
writeFileSync(
  path.join(dir, '1', 'model.ts'),
  `import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InferenceResponse, Tensor, type InferenceRequest, type InitializeArgs } from '@tritium/backend-python-like/model';

export default class TritonPythonModel {
  dir = '';
  initialize(args: InitializeArgs) {
    this.dir = args.model_repository;
  }
  isReady(): boolean | Promise<boolean> {
    if (existsSync(join(this.dir, 'hang'))) return new Promise<boolean>(() => {});
    return existsSync(join(this.dir, 'healthy'));
  }
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('Y', r.inputs()[0]!.data, r.inputs()[0]!.shape)]));
  }
}
`,
);
writeFileSync(path.join(dir, 'healthy'), '');

async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("model.ts isReady()", () => {
  it('a false or late answer makes the model and the server not ready, its requests 503 with why; true again serves', async () => {
    server = startServeProcess(['--model-repository', repo]);
    const { http, grpc: grpcPort } = await server.started;
    const status = (p: string): Promise<number> => fetch(`http://127.0.0.1:${http}${p}`).then((r) => r.status);
    const infer = async (): Promise<{ status: number; body: string }> => {
      const r = await fetch(`http://127.0.0.1:${http}/v2/models/flaky/infer`, {
        method: 'POST',
        body: JSON.stringify({ inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 1], data: [7] }] }),
      });
      return { status: r.status, body: await r.text() };
    };
    const client = new grpc.InferenceServerClient(`127.0.0.1:${grpcPort}`);
    try {
      await until('ready', async () => (await status('/v2/models/flaky/ready')) === 200);
      expect(await status('/v2/health/ready')).toBe(200);
      expect(await client.isModelReady('flaky')).toBe(true);
      expect((await infer()).status).toBe(200);

      rmSync(path.join(dir, 'healthy'));
      await until('not ready', async () => (await status('/v2/models/flaky/ready')) === 400);
      expect(await status('/v2/health/ready')).toBe(400);
      expect(await client.isModelReady('flaky')).toBe(false);
      const refused = await infer();
      expect(refused.status).toBe(503);
      expect(refused.body).toContain("model 'flaky' instance 'flaky_0_0' is not ready: isReady() returned false");

      writeFileSync(path.join(dir, 'healthy'), '');
      await until('ready again', async () => (await status('/v2/models/flaky/ready')) === 200);
      expect(await status('/v2/health/ready')).toBe(200);
      expect((await infer()).status).toBe(200);

      writeFileSync(path.join(dir, 'hang'), '');
      await until('not ready (no answer)', async () => (await status('/v2/models/flaky/ready')) === 400);
      expect((await infer()).body).toContain('isReady() did not answer within 100 ms');

      const log = server.log();
      expect(log.split("is not ready: isReady() returned false").length - 1).toBe(2); // the instance's warning and the version's error, once each
      expect(log).toContain("model 'flaky' instance 'flaky_0_0' is ready again");
    } finally {
      client.close();
    }
  }, 120_000);
});
