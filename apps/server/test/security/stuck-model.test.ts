/**
 * A model that never finishes costs only itself: an ONNX model running a Loop of 2^62 iterations
 * (onnx-gen's `buildLoopModel`), through `tritium serve`. Uploaded through the load API it runs in
 * a sandboxed child process; unloading it while a run is in flight drains for at most
 * --model-unload-timeout-secs and then kills the child, and another model's load meanwhile is not
 * held behind that unload. Under thread isolation (an operator's model) the run cannot be stopped,
 * and an expired exit timeout still ends the process.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildLoopModel } from '@tritium/onnx-gen';
import { startServeProcess, type ServeProcess } from '../support/serve-process.ts';

const LOOP = buildLoopModel({ iterationsInput: 'ITERATIONS' });
const FOREVER = 2 ** 62;

const loopConfig = (name: string, parameters: Record<string, string>) => ({
  name,
  backend: 'onnxruntime',
  max_batch_size: 0,
  input: [
    { name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] },
    { name: 'ITERATIONS', data_type: 'TYPE_INT64', dims: [1] },
  ],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  instance_group: [{ kind: 'KIND_CPU', count: 1 }],
  parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, { string_value: v }])),
});

const IDENTITY = `backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`;

async function post(url: string, body?: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, text: await res.text() };
}

/** A request that makes the loop run `iterations` times; resolves with the HTTP status (0 if the connection broke). */
function infer(http: number, model: string, iterations: number): Promise<number> {
  return post(`http://127.0.0.1:${http}/v2/models/${model}/infer`, {
    inputs: [
      { name: 'INPUT0', datatype: 'FP32', shape: [1], data: [1] },
      { name: 'ITERATIONS', datatype: 'INT64', shape: [1], data: [iterations] },
    ],
  }).then(
    (r) => r.status,
    () => 0,
  );
}

/** Pids of `root`'s descendant node processes running the worker runtime (process-isolated instances). */
function isolatedInstances(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return [...parentOf.keys()].filter((pid) => {
    let p = parentOf.get(pid);
    while (p !== undefined && p > 1 && p !== root) p = parentOf.get(p);
    if (p !== root) return false;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv[0] === process.execPath && argv.some((a) => a.endsWith('worker-runtime.js'));
    } catch {
      return false;
    }
  });
}

const repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-stuck-model-'));
beforeAll(() => {
  mkdirSync(path.join(repo, 'neighbour', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'neighbour', 'config.pbtxt'), IDENTITY);
  // An operator's model: thread isolation (the default), where a run cannot be stopped.
  mkdirSync(path.join(repo, 'spin_thread', '1'), { recursive: true });
  writeFileSync(path.join(repo, 'spin_thread', '1', 'model.onnx'), LOOP);
  writeFileSync(
    path.join(repo, 'spin_thread', 'config.pbtxt'),
    `backend: "onnxruntime"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "ITERATIONS" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
parameters { key: "tritium.execute_warn_ms" value { string_value: "100" } }
`,
  );
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe.runIf(process.platform === 'linux')('an uploaded ONNX model that never finishes', () => {
  let serve: ServeProcess;
  let http: number;
  beforeAll(async () => {
    serve = startServeProcess([
      '--model-repository', repo, '--model-control-mode=explicit', '--allow-model-file-load=true', '--model-unload-timeout-secs=15',
    ]);
    ({ http } = await serve.started);
    const load = await post(`http://127.0.0.1:${http}/v2/repository/models/spin/load`, {
      parameters: {
        config: JSON.stringify(loopConfig('spin', { 'tritium.execute_warn_ms': '100' })),
        'file:1/model.onnx': Buffer.from(LOOP).toString('base64'),
      },
    });
    expect(load, serve.log()).toEqual({ status: 200, text: '' });
  }, 60_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it('runs in a sandboxed child process, the config notwithstanding', async () => {
    expect(serve.log()).toContain("model 'spin': its files were uploaded through the load API, so its sessions run with process isolation");
    expect(isolatedInstances(serve.child.pid!)).toHaveLength(1);
    expect(await infer(http, 'spin', 5)).toBe(200);
  });

  it('its stuck unload holds no other load, and ends by killing the child after --model-unload-timeout-secs', async () => {
    const child = isolatedInstances(serve.child.pid!);
    const stuck = infer(http, 'spin', FOREVER);
    await vi.waitFor(() => expect(serve.log()).toMatch(/model 'spin' instance 'spin_0_0': execute of 1 request\(s\) still running/), { timeout: 30_000 });
    let unloaded = false;
    const unload = post(`http://127.0.0.1:${http}/v2/repository/models/spin/unload`).finally(() => (unloaded = true));
    await vi.waitFor(async () => {
      const index = JSON.parse((await post(`http://127.0.0.1:${http}/v2/repository/index`)).text) as { name: string; state: string }[];
      expect(index.find((m) => m.name === 'spin')?.state).toBe('UNLOADING');
    });
    // Another model loads while the unload still waits for the run.
    expect(await post(`http://127.0.0.1:${http}/v2/repository/models/neighbour/load`)).toEqual({ status: 200, text: '' });
    expect(unloaded).toBe(false);
    expect(await unload).toEqual({ status: 200, text: '' });
    expect(serve.log()).toContain("model 'spin' version 1 still busy 15000 ms into its unload; stopping its instances");
    expect(await stuck).toBe(503);
    expect(isolatedInstances(serve.child.pid!).filter((pid) => child.includes(pid))).toEqual([]);
    expect(serve.log()).toContain("successfully unloaded 'spin' version 1");
    // Its uploaded files are gone with it: the index no longer lists it.
    const index = JSON.parse((await post(`http://127.0.0.1:${http}/v2/repository/index`)).text) as { name: string }[];
    expect(index.map((m) => m.name)).toEqual(['neighbour', 'spin_thread']);
  }, 120_000);
});

it('an expired exit timeout ends the process although a worker thread is stuck in native code', async () => {
  const serve = startServeProcess(['--model-repository', repo, '--model-control-mode=explicit', '--load-model=spin_thread', '--exit-timeout-secs=1']);
  try {
    const { http } = await serve.started;
    void infer(http, 'spin_thread', FOREVER);
    await vi.waitFor(() => expect(serve.log()).toMatch(/instance 'spin_thread_0': execute of 1 request\(s\) still running/), { timeout: 30_000 });
    // One SIGTERM; the test sends SIGKILL only after 60 s, which reads as a failure.
    await serve.stop(60_000);
    const log = serve.log();
    expect(log, log).toContain('worker thread(s) stuck in native code did not end within 1000 ms of being terminated; killing the process (SIGKILL)');
    expect(serve.child.signalCode).toBe('SIGKILL');
  } finally {
    await serve.stop(1000);
  }
}, 120_000);
