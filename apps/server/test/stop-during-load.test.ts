/**
 * SIGTERM while a model is loading (Kubernetes' rolling update meeting an explicit load, a poll
 * picking up a new model): the load is abandoned (its worker ended, nothing published), the stop
 * takes the graceful path within --exit-timeout-secs, and the load request gets an answer. The model
 * here is a python-like model.ts whose initialize never returns, loaded through `tritium serve`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { startServeProcess } from './support/serve-process.ts';

const CONFIG = `name: "stuck_init"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
`;

// initialize awaits something that never comes (a download that stalled, a lock never released).
const MODEL = `import type { InferenceRequest, InitializeArgs } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  async initialize(_args: InitializeArgs) {
    await new Promise(() => setInterval(() => {}, 60_000));
  }
  execute(requests: InferenceRequest[]) {
    return [];
  }
}
`;

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-stop-during-load-'));
mkdirSync(path.join(repo, 'stuck_init', '1'), { recursive: true });
writeFileSync(path.join(repo, 'stuck_init', 'config.pbtxt'), CONFIG);
writeFileSync(path.join(repo, 'stuck_init', '1', 'model.ts'), MODEL);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

it('SIGTERM during a load that never finishes: the load is abandoned and the server stops gracefully, exit code 0', async () => {
  const serve = startServeProcess(['--model-repository', repo, '--model-control-mode=explicit', '--exit-timeout-secs=3']);
  try {
    const { http } = await serve.started;
    const load = fetch(`http://127.0.0.1:${http}/v2/repository/models/stuck_init/load`, { method: 'POST' }).then(
      async (r) => ({ status: r.status, body: await r.text() }),
      (e: unknown) => ({ status: 0, body: String(e) }),
    );
    // The worker is started and its initialize is running.
    await vi.waitFor(() => expect(serve.log()).toContain('loading: stuck_init:1'), { timeout: 30_000 });
    // One SIGTERM; bounded by the test, not by the server: SIGKILL after 30 s reads as a failure, not a hang.
    const code = await serve.stop(30_000);
    const log = serve.log();
    expect(log, log).toContain('Server stopped');
    expect(log).not.toMatch(/Exit timeout .* expired/);
    expect(code).toBe(0);
    // The client's load request was answered (not cut by the process exiting).
    const answer = await load;
    expect(answer.status, answer.body).toBe(400);
    expect(answer.body).toContain("load failed for model 'stuck_init'");
    expect(answer.body).toContain('Server is stopping');
  } finally {
    await serve.stop(1000);
  }
}, 90_000);
