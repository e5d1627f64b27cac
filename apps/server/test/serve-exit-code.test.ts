/**
 * What `tritium serve`'s exit says about its stop, as Triton's: 0 when everything finished within
 * --exit-timeout-secs; 1 with Triton's `failed to stop server: Internal - Exit timeout expired.
 * Exiting immediately.` when a request was still running at the timeout and was torn down; 1 at
 * once on a second SIGTERM (the operator's "now"). The model is a python-like model.ts whose execute
 * never returns.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const CONFIG = `name: "never_ends"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
`;

// execute marks that it started (a file the test waits for), then waits for something that never comes.
const MODEL = `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InferenceRequest, InitializeArgs } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  dir = '';
  initialize(args: InitializeArgs) {
    this.dir = args.model_repository;
  }
  async execute(requests: InferenceRequest[]) {
    writeFileSync(join(this.dir, 'executing'), '');
    await new Promise(() => setInterval(() => {}, 60_000));
    return [];
  }
}
`;

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-serve-exit-code-'));
mkdirSync(path.join(repo, 'never_ends', '1'), { recursive: true });
writeFileSync(path.join(repo, 'never_ends', 'config.pbtxt'), CONFIG);
writeFileSync(path.join(repo, 'never_ends', '1', 'model.ts'), MODEL);
const marker = path.join(repo, 'never_ends', 'executing');
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** Starts serve and sends one request that reaches the model's execute (and never ends there). */
async function serveWithStuckRequest(exitTimeoutSecs: number): Promise<{ serve: ServeProcess; answer: Promise<number> }> {
  rmSync(marker, { force: true });
  const serve = startServeProcess(['--model-repository', repo, `--exit-timeout-secs=${exitTimeoutSecs}`]);
  const { http } = await serve.started;
  const answer = fetch(`http://127.0.0.1:${http}/v2/models/never_ends/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputs: [{ name: 'X', shape: [1], datatype: 'INT32', data: [1] }] }),
  }).then(
    (r) => r.status,
    () => 0,
  );
  await vi.waitFor(() => expect(existsSync(marker)).toBe(true), { timeout: 30_000 });
  return { serve, answer };
}

it('a request still running at the exit timeout: torn down, answered, exit code 1 with Triton\'s line', async () => {
  const { serve, answer } = await serveWithStuckRequest(1);
  try {
    const code = await serve.stop(30_000);
    const log = serve.log();
    expect(log).toContain('failed to stop server: Internal - Exit timeout expired. Exiting immediately.');
    expect(code, log).toBe(1);
    // The request was failed by the teardown and answered before the listener closed.
    expect([500, 503]).toContain(await answer);
  } finally {
    await serve.stop(1000);
  }
}, 90_000);

it('a second SIGTERM exits at once with code 1, without waiting for the exit timeout', async () => {
  const { serve } = await serveWithStuckRequest(300);
  try {
    serve.child.kill('SIGTERM');
    await vi.waitFor(() => expect(serve.log()).toContain('Received SIGTERM'), { timeout: 10_000 });
    // The test's bound (20 s) is far below the 300 s exit timeout.
    const code = await serve.stop(20_000);
    expect(serve.log()).toContain('received SIGTERM again, exiting now');
    expect(code).toBe(1);
  } finally {
    await serve.stop(1000);
  }
}, 90_000);

it('SIGTERM while models still load: the start finishes, then the server stops, exit code 0', async () => {
  // initialize marks that it started, then takes 2 s: the signal arrives in the middle of the start.
  const slow = mkdtempSync(path.join(os.tmpdir(), 'tritium-serve-slow-start-'));
  try {
    mkdirSync(path.join(slow, 'slow_start', '1'), { recursive: true });
    writeFileSync(path.join(slow, 'slow_start', 'config.pbtxt'), CONFIG.replace('never_ends', 'slow_start'));
    writeFileSync(
      path.join(slow, 'slow_start', '1', 'model.ts'),
      `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InitializeArgs } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  async initialize(args: InitializeArgs) {
    writeFileSync(join(args.model_repository, 'initializing'), '');
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  execute() { return []; }
}
`,
    );
    const serve = startServeProcess(['--model-repository', slow, '--exit-timeout-secs=10']);
    serve.started.catch(() => undefined);
    try {
      await vi.waitFor(() => expect(existsSync(path.join(slow, 'slow_start', 'initializing'))).toBe(true), { timeout: 60_000 });
      serve.child.kill('SIGTERM');
      const code = await serve.exited;
      const log = serve.log();
      expect(log).toContain('Received SIGTERM while starting: the server stops once its start has finished');
      expect(log).toContain('Server stopped');
      expect(code, log).toBe(0);
    } finally {
      await serve.stop(1000);
    }
  } finally {
    rmSync(slow, { recursive: true, force: true });
  }
}, 90_000);
