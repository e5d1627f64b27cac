/**
 * Where an ONNX session runs: a worker thread by default, a sandboxed child process with
 * `tritium.isolation: process` or when the model's files were uploaded. A run that never ends (a
 * Loop of 2^62 iterations) cannot be stopped inside a thread; in a process the execute timeout kills
 * the child, its request fails, and the instance restarts and serves.
 */
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped, typedView, type InferResponse } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
// Tests generate their models with the workspace's ONNX generator (a tool, not a runtime dependency).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildLoopModel } from '@tritium/onnx-gen';
import { onnxBackend } from '../src/index.ts';
import { captureLog, loadModel, request, signal, TempRepo, type Loaded } from './helpers.ts';

const CONFIG = (parameters: string) => `
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "ITERATIONS" data_type: TYPE_INT64 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
${parameters}`;
const param = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }`;
const LOOP = buildLoopModel({ iterationsInput: 'ITERATIONS' });

function loopRequest(iterations: bigint) {
  return request('loop', [
    tensorFromTyped('INPUT0', 'FP32', [2], Float32Array.of(3, 4)),
    tensorFromTyped('ITERATIONS', 'INT64', [1], BigInt64Array.of(iterations)),
  ]);
}

async function run(m: Loaded, iterations: bigint): Promise<number[]> {
  const { results } = await m.instance.execute([loopRequest(iterations)], signal());
  const r = results[0]!;
  if (InferError.is(r)) throw r;
  return Array.from(typedView((r as InferResponse).outputs[0]!) as Float32Array);
}

/** Pids of this process's descendant `node` processes running the worker runtime (one per process-isolated instance; the sandbox's wrappers not counted). */
function isolatedChildren(): number[] {
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
  const descends = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...parentOf.keys()].filter((pid) => {
    if (!descends(pid)) return false;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
      return argv[0] === process.execPath && argv.at(-1)!.endsWith('worker-runtime.js');
    } catch {
      return false;
    }
  });
}

const linux = process.platform === 'linux';
if (!linux) console.log('[isolation.test] the child-process checks read /proc: skipped on this platform');

let repo: TempRepo;
beforeAll(async () => {
  repo = await TempRepo.create();
});
afterAll(async () => {
  await repo.dispose();
});

describe('tritium.isolation: process', () => {
  let m: Loaded;
  beforeAll(async () => {
    m = await loadModel(repo, 'loop', LOOP, CONFIG(`${param('tritium.isolation', 'process')}\n${param('tritium.execute_timeout_ms', '1500')}`), {
      autoComplete: false,
    });
  });
  afterAll(() => m?.dispose());

  it('serves from a child process', async () => {
    expect(await run(m, 10n)).toEqual([3, 4]);
    if (linux) expect(isolatedChildren()).toHaveLength(1);
  });

  it.runIf(linux)('a run that never ends is killed with its process at the execute timeout; the instance restarts and serves', async () => {
    const before = isolatedChildren();
    expect(before).toHaveLength(1);
    await expect(run(m, 2n ** 62n)).rejects.toThrow(/crashed: execute timed out after 1500 ms/);
    // The next request waits for the restart.
    expect(await run(m, 3n)).toEqual([3, 4]);
    const after = isolatedChildren();
    expect(after).toHaveLength(1);
    expect(after).not.toContain(before[0]);
  }, 60_000);
});

describe('uploaded files', () => {
  it('run with process isolation whatever the config says, and the server says so', async () => {
    const { modelDir, versionDir } = await repo.model('uploaded', LOOP);
    const log = captureLog();
    const config = normalizeModelConfig({ ...parseModelConfigText(CONFIG(param('tritium.isolation', 'thread'))), name: 'uploaded', backend: 'onnxruntime' }, { modelName: 'uploaded' });
    const model = await onnxBackend({ cores: 2 }).loadModel({ config, version: 1, modelDir, versionDir, log, uploadedFiles: true });
    const instance = await model.createInstance({ name: 'uploaded_0', kind: 'CPU', device: 0, groupName: 'uploaded' });
    try {
      expect(log.lines.join('\n')).toContain("model 'uploaded': its files were uploaded through the load API, so its sessions run with process isolation");
      if (linux) expect(isolatedChildren()).toHaveLength(1);
      const { results } = await instance.execute([loopRequest(1n)], signal());
      expect(InferError.is(results[0])).toBe(false);
    } finally {
      await instance.dispose();
      await model.dispose();
    }
    if (linux) expect(isolatedChildren()).toEqual([]);
  }, 60_000);

  it.runIf(linux)("takes the server's worker policy: --strict-sandbox refuses a session whose sandbox would lack a guarantee", async () => {
    // A model folder closed to everyone but its owner: the sandbox's uid cannot read it, a missing guarantee.
    const { modelDir, versionDir } = await repo.model('strict', LOOP);
    chmodSync(modelDir, 0o700);
    const config = normalizeModelConfig({ ...parseModelConfigText(CONFIG(param('tritium.isolation', 'process'))), name: 'strict', backend: 'onnxruntime' }, { modelName: 'strict' });
    const model = await onnxBackend({ cores: 2 }).loadModel({ config, version: 1, modelDir, versionDir, log: captureLog(), workerPolicy: { strictSandbox: true } });
    try {
      await expect(model.createInstance({ name: 'strict_0', kind: 'CPU', device: 0, groupName: 'strict' })).rejects.toMatchObject({
        code: 'UNSUPPORTED',
        message: expect.stringMatching(/does NOT enforce: .*refused by --strict-sandbox$/),
      });
      expect(isolatedChildren()).toEqual([]);
    } finally {
      await model.dispose();
    }
  }, 60_000);

  it('a bad tritium.isolation is refused naming the key', async () => {
    await expect(loadModel(repo, 'bad', LOOP, CONFIG(param('tritium.isolation', 'vm')), { autoComplete: false })).rejects.toThrow(
      "model 'bad': parameter 'tritium.isolation' must be 'thread' or 'process', got 'vm'",
    );
  });
});
