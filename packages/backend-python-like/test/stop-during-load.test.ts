/**
 * An embedder's `await server.stop()` while a model.ts is loading whose initialize never returns:
 * the load is abandoned (it fails naming the stop, its worker is ended, nothing is published) and
 * the stop returns without waiting for the worker's start timeout (60 s).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { captureLog } from '@tritium/core/testing';
import { pythonLikeBackend } from '../src/index.ts';

// initialize awaits something that never comes (a download that stalled, a lock never released).
const STUCK_MODEL = `import { Logger } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  async initialize() {
    Logger.logInfo('initialize started');
    await new Promise(() => setInterval(() => {}, 60_000));
  }
  execute() {
    return [];
  }
}
`;

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-pl-stop-load-'));
for (const isolation of ['thread', 'process']) {
  const name = `stuck_${isolation}`;
  mkdirSync(path.join(repo, name, '1'), { recursive: true });
  writeFileSync(
    path.join(repo, name, 'config.pbtxt'),
    `name: "${name}"
backend: "python"
max_batch_size: 0
input [ { name: "X" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] } ]
parameters { key: "tritium.isolation" value: { string_value: "${isolation}" } }
`,
  );
  writeFileSync(path.join(repo, name, '1', 'model.ts'), STUCK_MODEL);
}
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/**
 * Child processes of this test process other than esbuild's service: instance workers. Read from
 * /proc (process isolation is Linux-only), not `ps`, which a slim image may not have.
 */
function workerProcesses(): string[] {
  const children: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    let cmdline: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      continue; // it exited meanwhile
    }
    // "pid (comm) state ppid ...": the command may hold spaces and parentheses, so read after its last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === process.pid && !cmdline.includes('esbuild')) children.push(`${pid} ${cmdline}`);
  }
  return children;
}

/** `p` settled within `ms` (a bound of the test, so a regression fails instead of hanging). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
}

it.each(['thread', 'process'])('%s isolation: abandons the load (it fails naming the stop) and stop() returns before its own exit timeout', async (isolation) => {
  const name = `stuck_${isolation}`;
  const log = captureLog();
  const server = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend()], modelControlMode: 'explicit', log });
  await server.start();
  const load = server.loadModel(name).then(
    () => 'loaded',
    (e: unknown) => e as Error,
  );
  // The worker is up and inside initialize.
  await vi.waitFor(() => expect(log.lines.some((l) => l.includes('initialize started'))).toBe(true), { timeout: 30_000 });
  // Process isolation: the sandboxed child running initialize is ours until the stop ends it.
  if (isolation === 'process') expect(workerProcesses()).not.toEqual([]);
  // An exit timeout far longer than the test's bound: only abandoning the load returns in time.
  const stopped = server.stop({ timeoutMs: 60_000 });
  expect(await within(stopped, 20_000), 'stop() returned').toBe(true);
  const error = await load;
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toContain(`failed to load '${name}' version 1: Unavailable: Server is stopping: the load was abandoned`);
  expect(server.modelReady(name)).toBe(false);
  await vi.waitFor(() => expect(workerProcesses()).toEqual([]), { timeout: 10_000 });
}, 60_000);
