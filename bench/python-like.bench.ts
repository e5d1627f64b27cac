/**
 * Overhead of the python-like backend per execute: an "empty" model.ts (echoes its input as its
 * output, no work) against core's identity test backend (the same worker host, no author API), at
 * batch 1 and 32 (requests of INT32 [1,16]), both through the backend SPI. Measured side by side
 * in interleaved rounds (best round kept) so outside load hits both columns alike; wall time and
 * CPU time (process.cpuUsage: main thread + workers) per execute.
 * Run: node --import tsx bench/python-like.bench.ts
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { normalizeModelConfig, parseModelConfigText, silentLogger, type Backend, type InferRequest, type ModelInstance } from '@tritium/core';
import { identityBackend } from '@tritium/core/testing';
import { pythonLikeBackend } from '@tritium/backend-python-like';

const CONFIG = (backend: string) => `name: "bench" backend: "${backend}" max_batch_size: 64
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]`;

const EMPTY_MODEL = `import { Tensor, InferenceResponse, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => {
      const x = r.inputs()[0]!;
      return new InferenceResponse({ outputTensors: [new Tensor('OUTPUT0', x.data, x.shape, x.datatype)] });
    });
  }
}
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-bench-pl-'));
mkdirSync(path.join(dir, 'bench', '1'), { recursive: true });
writeFileSync(path.join(dir, 'bench', '1', 'model.ts'), EMPTY_MODEL);

async function instanceOf(backend: Backend): Promise<{ instance: ModelInstance; close(): Promise<void> }> {
  const config = normalizeModelConfig(parseModelConfigText(CONFIG(backend.name)), { modelName: 'bench' });
  const modelDir = path.join(dir, 'bench');
  const model = await backend.loadModel({ config, version: 1, modelDir, versionDir: path.join(modelDir, '1'), log: silentLogger });
  const instance = await model.createInstance({ name: 'bench_0_0', kind: 'CPU', device: 0, groupName: 'bench_0' });
  return {
    instance,
    async close() {
      await instance.dispose();
      await model.dispose();
    },
  };
}

function batchOf(size: number): InferRequest[] {
  return Array.from({ length: size }, (_, i) => ({
    id: String(i),
    model: 'bench',
    inputs: [{ name: 'INPUT0', datatype: 'INT32' as const, shape: [1, 16], data: new Uint8Array(new Int32Array(16).fill(i).buffer) }],
  }));
}

const signal = new AbortController().signal;
/** Wall µs and CPU µs (all threads of this process: main + workers) per execute. */
async function usPerExecute(instance: ModelInstance, size: number, iterations: number): Promise<{ wall: number; cpu: number }> {
  const batch = batchOf(size);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await instance.execute(batch, signal);
  const c = process.cpuUsage(c0);
  return { wall: ((performance.now() - t0) * 1000) / iterations, cpu: (c.user + c.system) / iterations };
}

const identity = await instanceOf(identityBackend());
const python = await instanceOf(pythonLikeBackend());
try {
  for (const size of [1, 32]) {
    await usPerExecute(identity.instance, size, 500);
    await usPerExecute(python.instance, size, 500);
  }
  const ROUNDS = 5;
  const ITER = 2000;
  const rows = [
    ['batch', 'identity µs/exec', 'model.ts µs/exec', 'overhead µs/exec', 'ratio', 'identity CPU µs', 'model.ts CPU µs', 'overhead CPU µs/exec', 'CPU µs/request'],
  ];
  for (const size of [1, 32]) {
    const best = { id: { wall: Infinity, cpu: Infinity }, py: { wall: Infinity, cpu: Infinity } };
    const iterations = size === 1 ? ITER : 300;
    for (let r = 0; r < ROUNDS; r++) {
      for (const [key, inst] of [['id', identity.instance], ['py', python.instance]] as const) {
        const m = await usPerExecute(inst, size, iterations);
        best[key] = { wall: Math.min(best[key].wall, m.wall), cpu: Math.min(best[key].cpu, m.cpu) };
      }
    }
    rows.push([
      String(size),
      best.id.wall.toFixed(1),
      best.py.wall.toFixed(1),
      (best.py.wall - best.id.wall).toFixed(1),
      (best.py.wall / best.id.wall).toFixed(2),
      best.id.cpu.toFixed(1),
      best.py.cpu.toFixed(1),
      (best.py.cpu - best.id.cpu).toFixed(1),
      ((best.py.cpu - best.id.cpu) / size).toFixed(2),
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  for (const row of rows) console.log(row.map((cell, c) => cell.padStart(widths[c]!)).join('  '));
  console.log('\ntarget: overhead < 100 µs per execute. CPU columns count every thread of this process, so they hold up on a');
  console.log('loaded machine where wall time mostly measures waiting for a core (check `uptime`).');
} finally {
  await identity.close();
  await python.close();
  rmSync(dir, { recursive: true, force: true });
}
