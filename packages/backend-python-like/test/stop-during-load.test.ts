/**
 * An embedder's `await server.stop()` while a model.ts is loading whose initialize never returns:
 * the load is abandoned (it fails naming the stop, its worker is ended, nothing is published) and
 * the stop returns without waiting for the worker's start timeout (60 s).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { pythonLikeBackend } from '../src/index.ts';

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-pl-stop-load-'));
mkdirSync(path.join(repo, 'stuck_init', '1'), { recursive: true });
writeFileSync(
  path.join(repo, 'stuck_init', 'config.pbtxt'),
  `name: "stuck_init"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
`,
);
writeFileSync(
  path.join(repo, 'stuck_init', '1', 'model.ts'),
  `export default class TritonPythonModel {
  async initialize() {
    await new Promise(() => setInterval(() => {}, 60_000));
  }
  execute() {
    return [];
  }
}
`,
);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** `p` settled within `ms` (a bound of the test, so a regression fails instead of hanging). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
}

it('abandons the load: it fails naming the stop, and stop() returns before its own exit timeout', async () => {
  const server = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend()], modelControlMode: 'explicit' });
  await server.start();
  const load = server.loadModel('stuck_init').then(
    () => 'loaded',
    (e: unknown) => e as Error,
  );
  await vi.waitFor(async () => expect((await server.repositoryIndex()).find((m) => m.name === 'stuck_init')?.state).toBe('LOADING'), { timeout: 30_000 });
  // An exit timeout far longer than the test's bound: only abandoning the load returns in time.
  const stopped = server.stop({ timeoutMs: 60_000 });
  expect(await within(stopped, 20_000), 'stop() returned').toBe(true);
  const error = await load;
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toContain("failed to load 'stuck_init' version 1: Unavailable: Server is stopping: the load was abandoned");
  expect(server.modelReady('stuck_init')).toBe(false);
}, 60_000);
