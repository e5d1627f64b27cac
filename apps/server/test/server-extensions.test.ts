/**
 * Server metadata advertises only extensions that work: every advertised extension is exercised
 * through its API here (a new extension needs a probe), over HTTP and gRPC alike, with and
 * without `--allow-client-shm`.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput, InferRequestedOutput } from '@tritium/client';
import { SERVER_EXTENSIONS } from '@tritium/core/server';
import { startTestServer, type TestServer } from './support/start-server.ts';

const fp32 = (values: number[]) => new InferInput('INPUT0', [1, values.length], 'FP32').setData(Float32Array.from(values));

/** One call per extension that must succeed when the extension is advertised. */
const PROBES: Record<string, (s: TestServer) => Promise<unknown>> = {
  classification: async (s) => {
    const r = await s.http.infer('simple', [fp32([0.1, 0.9])], { outputs: [new InferRequestedOutput('OUTPUT0', { classCount: 1 })] });
    expect(r.asStrings('OUTPUT0')).toEqual(['0.900000:1']);
  },
  model_repository: async (s) => expect(await s.http.getModelRepositoryIndex()).toContainEqual(expect.objectContaining({ name: 'simple' })),
  'model_repository(unload_dependents)': async (s) => {
    await s.http.unloadModel('addsub', { unloadDependents: true });
    await s.http.loadModel('addsub');
  },
  schedule_policy: async (s) => expect((await s.http.infer('simple', [fp32([1])], { priority: 1, timeout: 10_000_000 })).asTypedArray('OUTPUT0', 'FP32')[0]).toBe(1),
  model_configuration: async (s) => expect((await s.http.getModelConfig('simple')).max_batch_size).toBe(8),
  system_shared_memory: async (s) => {
    const key = `tritium-ext-test-${process.pid}`;
    fs.writeFileSync(`/dev/shm/${key}`, Buffer.alloc(64));
    try {
      await s.http.registerSystemSharedMemory('ext', `/${key}`, 64);
      expect(await s.http.getSystemSharedMemoryStatus()).toEqual([{ name: 'ext', key: `/${key}`, offset: 0, byte_size: 64 }]);
      await s.http.unregisterSystemSharedMemory('ext');
    } finally {
      fs.rmSync(`/dev/shm/${key}`, { force: true });
    }
  },
  binary_tensor_data: async (s) => {
    const r = await s.http.infer('simple', [fp32([2, 3])], { outputs: [new InferRequestedOutput('OUTPUT0', { binary: true })] });
    expect([...r.asTypedArray('OUTPUT0', 'FP32')]).toEqual([2, 3]);
  },
  parameters: async (s) => expect((await s.http.infer('simple', [fp32([4])], { parameters: { note: 'x', n: 3 } })).asTypedArray('OUTPUT0', 'FP32')[0]).toBe(4),
  sequence: async (s) => {
    const one = (v: number) => new InferInput('INPUT0', [1], 'INT32').setData(Int32Array.of(v));
    const first = await s.http.infer('sequence', [one(3)], { sequenceId: 'ext', sequenceStart: true });
    expect(first.asTypedArray('OUTPUT0', 'INT32')[0]).toBe(3);
    await s.grpc.infer('sequence', [one(4)], { sequenceId: 'ext', sequenceEnd: true });
    await expect(s.http.infer('sequence', [one(5)], { sequenceId: 'ext' })).rejects.toMatchObject({ status: '400' });
  },
  statistics: async (s) => expect((await s.http.getInferenceStatistics('simple')).model_stats[0].name).toBe('simple'),
  trace: async (s) => {
    expect(await s.http.getTraceSettings()).toMatchObject({ trace_level: ['OFF'], trace_mode: 'triton' });
    expect((await s.grpc.updateTraceSettings({ trace_count: ['3'] }, 'simple'))['trace_count']).toEqual(['3']);
    await s.grpc.updateTraceSettings({ trace_count: [] }, 'simple');
  },
  logging: async (s) => expect(await s.http.getLogSettings()).toMatchObject({ log_info: true }),
};

async function checkAdvertised(s: TestServer): Promise<string[]> {
  const viaHttp = (await s.http.getServerMetadata()).extensions;
  expect((await s.grpc.getServerMetadata()).extensions).toEqual(viaHttp);
  // Triton's order, none invented.
  expect(viaHttp).toEqual(SERVER_EXTENSIONS.filter((e) => viaHttp.includes(e)));
  for (const extension of viaHttp) {
    const probe = PROBES[extension];
    expect(probe, `no probe for advertised extension '${extension}'`).toBeDefined();
    await probe!(s);
  }
  return viaHttp;
}

describe('server metadata extensions', () => {
  let s: TestServer;
  let shm: TestServer;
  beforeAll(async () => {
    const models = ['simple', 'addsub', 'sequence'];
    s = await startTestServer({ modelControlMode: 'explicit', loadModels: ['*'] }, undefined, models);
    shm = await startTestServer({ modelControlMode: 'explicit', loadModels: ['*'], allowClientShm: true }, undefined, models);
  });
  afterAll(async () => {
    await s?.close();
    await shm?.close();
  });

  it('advertises only what works: no CUDA shared memory; system shm only when allowed', async () => {
    const plain = await checkAdvertised(s);
    expect(plain).toEqual([
      'classification',
      'sequence',
      'model_repository',
      'model_repository(unload_dependents)',
      'schedule_policy',
      'model_configuration',
      'binary_tensor_data',
      'parameters',
      'statistics',
      'trace',
      'logging',
    ]);
    const withShm = await checkAdvertised(shm);
    expect(withShm).toEqual(SERVER_EXTENSIONS.filter((e) => plain.includes(e) || e === 'system_shared_memory'));
  });

  it('the extensions left out do not work on this server', async () => {
    await expect(s.http.getCudaSharedMemoryStatus()).rejects.toMatchObject({ status: '501' });
    await expect(s.http.registerSystemSharedMemory('r', '/nope', 8)).rejects.toMatchObject({ status: '503' });
  });
});
