/**
 * The load API (`POST /v2/repository/models/<m>/load`, gRPC RepositoryModelLoad) lets any client that
 * reaches the port send a config and, with --allow-model-file-load, files. Every size it carries is
 * bounded and every bad name answers 400 naming it, and the server keeps serving afterwards.
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { DEFAULT_MODEL_LIMITS } from '@tritium/core/server';
import { startTestServer, type TestServer } from '../support/start-server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ modelControlMode: 'explicit', allowModelFileLoad: true }, undefined, ['simple']);
});
afterAll(async () => {
  await s?.close();
});

const SIMPLE = {
  backend: 'identity',
  max_batch_size: 8,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
};

async function load(model: string, parameters: Record<string, unknown>): Promise<{ status: number; error: string }> {
  const res = await fetch(`http://${s.httpUrl}/v2/repository/models/${model}/load`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ parameters }),
  });
  const text = await res.text();
  return { status: res.status, error: text ? ((JSON.parse(text) as { error?: string }).error ?? '') : '' };
}

async function stillServes(): Promise<void> {
  expect(await load('simple', {})).toEqual({ status: 200, error: '' });
  const r = await s.http.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(3, 4))]);
  expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([3, 4]);
}

describe('load API: config override bounds', () => {
  it('an instance count of 10^8 is refused with 400 naming the group and the bound', async () => {
    const config = { ...SIMPLE, instance_group: [{ kind: 'KIND_CPU', count: 100_000_000 }] };
    const r = await load('simple', { config: JSON.stringify(config) });
    expect(r.status).toBe(400);
    expect(r.error).toContain('has count 100000000');
    expect(r.error).toContain('at most 1024');
    await stillServes();
  });

  it('instances are counted across versions: version_policy all over 1025 uploaded versions is refused before any starts (each version started its own worker)', async () => {
    const config = { ...SIMPLE, version_policy: { all: {} }, instance_group: [{ kind: 'KIND_CPU', count: 1 }] };
    const versions = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`file:${i + 1}/x`, '']));
    const r = await load('simple', { config: JSON.stringify(config), ...versions });
    expect(r.status).toBe(400);
    expect(r.error).toContain('would start 1025 instances (1025 versions under its version policy, 1 instances each); at most 1024');
    await stillServes();
  });

  it('instances are counted per listed GPU: 2 groups of 600 are refused', async () => {
    const config = { ...SIMPLE, instance_group: [{ kind: 'KIND_CPU', count: 600 }, { kind: 'KIND_CPU', count: 600 }] };
    const r = await load('simple', { config: JSON.stringify(config) });
    expect(r.status).toBe(400);
    expect(r.error).toContain('makes 1200 instances');
  });
});

describe('load API: scheduler sizes', () => {
  it('sequence batching with max_candidate_sequences 2147483647 is refused 400 naming it (the batcher built every slot up front and ran the server out of memory)', async () => {
    const config = { ...SIMPLE, instance_group: [{ kind: 'KIND_CPU', count: 1 }], sequence_batching: { oldest: { max_candidate_sequences: 2147483647 } } };
    const r = await load('simple', { config: JSON.stringify(config) });
    expect(r.status).toBe(400);
    expect(r.error).toContain('would hold 2147483647 sequence slots (max_candidate_sequences 2147483647 per instance, 1 instances); at most 65536');
    await stillServes();
  });

  it('direct sequence batching counts max_batch_size slots per instance: 2 instances of 40000 are refused', async () => {
    const config = { ...SIMPLE, max_batch_size: 40000, instance_group: [{ kind: 'KIND_CPU', count: 2 }], sequence_batching: {} };
    const r = await load('simple', { config: JSON.stringify(config) });
    expect(r.status).toBe(400);
    expect(r.error).toContain('would hold 80000 sequence slots (max_batch_size 40000 per instance, 2 instances)');
  });

  it("priority_levels 2^64-1 loads at once and serves, as Triton's qa/L0_config_json max_priority_level does", async () => {
    // qa/L0_config_json/max_priority_level.pbtxt as a config override: max uint64 levels, default
    // level max uint32, a policy for level 2^32. Triton serves it and prints these values back.
    const config = {
      ...SIMPLE,
      max_batch_size: 1,
      dynamic_batching: {
        priority_levels: '18446744073709551615',
        default_priority_level: 4294967295,
        priority_queue_policy: {
          '4294967296': { timeout_action: 'REJECT', default_timeout_microseconds: '18446744073709551615', allow_timeout_override: true, max_queue_size: 10 },
        },
      },
    };
    const started = Date.now();
    expect(await load('simple', { config: JSON.stringify(config) })).toEqual({ status: 200, error: '' });
    expect(Date.now() - started).toBeLessThan(10_000);
    const printed = await (await fetch(`http://${s.httpUrl}/v2/models/simple/config`)).text();
    for (const expected of [
      '"priority_levels":18446744073709551615',
      '"default_priority_level":4294967295',
      '"4294967296":{"timeout_action":"REJECT","default_timeout_microseconds":18446744073709551615,"allow_timeout_override":true,"max_queue_size":10}',
    ]) {
      expect(printed).toContain(expected);
    }
    // Requests at the default level, at level 1 and at the level with its own policy are all served.
    for (const priority of [undefined, 1, 4294967296]) {
      const r = await s.http.infer('simple', [new InferInput('INPUT0', [1, 2], 'FP32').setData(Float32Array.of(5, 6))], {
        ...(priority === undefined ? {} : { priority }),
      });
      expect(Array.from(r.asTypedArray('OUTPUT0', 'FP32'))).toEqual([5, 6]);
    }
    await stillServes();
  });
});

describe('load API: model file names', () => {
  for (const [field, value] of [
    ['default_model_filename', '../../../../../usr/lib/node_modules/npm/index.js'],
    ['default_model_filename', '/etc/hostname'],
    ['cc_model_filenames', { '8.0': '../../other/1/model.plan' }],
  ] as const) {
    it(`${field} ${JSON.stringify(value)} is refused 400 (a config override made backends open, or import as model code, any file the server can read)`, async () => {
      const r = await load('simple', { config: JSON.stringify({ ...SIMPLE, [field]: value }) });
      expect(r.status).toBe(400);
      expect(r.error).toMatch(/model file name '.+' of model simple escapes its version directory/);
    });
  }

  it('a file name inside the version folder still loads', async () => {
    const r = await load('simple', { config: JSON.stringify({ ...SIMPLE, default_model_filename: 'sub/../model.bin' }) });
    expect(r).toEqual({ status: 200, error: '' });
  });
});

describe('load API: ensemble cycles', () => {
  const ensemble = (step: string, inName: string, outName: string): string =>
    JSON.stringify({
      platform: 'ensemble',
      max_batch_size: 0,
      input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUT', data_type: 'TYPE_FP32', dims: [-1] }],
      ensemble_scheduling: { step: [{ model_name: step, model_version: -1, input_map: { [inName]: 'IN' }, output_map: { [outName]: 'OUT' } }] },
    });

  it('reloading eb to call ea while ea calls eb is refused with the cycle', async () => {
    const file = { 'file:1/x': '' };
    expect(await load('eb', { config: ensemble('simple', 'INPUT0', 'OUTPUT0'), ...file })).toEqual({ status: 200, error: '' });
    expect(await load('ea', { config: ensemble('eb', 'IN', 'OUT'), ...file })).toEqual({ status: 200, error: '' });
    const r = await load('eb', { config: ensemble('ea', 'IN', 'OUT'), ...file });
    expect(r.status).toBe(400);
    expect(r.error).toContain('circular dependency between ensembles: eb -> ... -> ea -> eb');
    const res = await fetch(`http://${s.httpUrl}/v2/models/ea/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'IN', datatype: 'FP32', shape: [2], data: [5, 6] }] }),
    });
    expect(await res.json()).toMatchObject({ outputs: [{ name: 'OUT', data: [5, 6] }] });
    for (const m of ['ea', 'eb']) await fetch(`http://${s.httpUrl}/v2/repository/models/${m}/unload`, { method: 'POST' });
    await stillServes();
  });
});

describe('load API: model_metrics histogram buckets', () => {
  const withBuckets = (buckets: unknown[]): string =>
    JSON.stringify({
      ...SIMPLE,
      model_metrics: { metric_control: [{ metric_identifier: { family: 'nv_inference_first_response_histogram_ms' }, histogram_options: { buckets } }] },
    });

  it('a million buckets are refused 400 (every request walked them on the main thread, every scrape printed them)', async () => {
    const r = await load('simple', { config: withBuckets(Array.from({ length: 1_000_000 }, (_, i) => i)) });
    expect(r.status).toBe(400);
    expect(r.error).toContain("histogram options have 1000000 'buckets'; at most 1000 are allowed");
  });

  it('a NaN or decreasing bound is refused 400 (le="NaN" went into every scrape)', async () => {
    for (const [buckets, bad] of [[['NaN'], 'NaN at index 0'], [[5, 2], '2 at index 1']] as const) {
      const r = await load('simple', { config: withBuckets([...buckets]) });
      expect(r.status).toBe(400);
      expect(r.error).toContain(`histogram 'buckets' must be finite and in increasing order, got ${bad}`);
    }
    await stillServes();
  });
});

describe('load API: warmup bounds', () => {
  const withWarmup = (sample: Record<string, unknown>): string =>
    JSON.stringify({ ...SIMPLE, max_batch_size: 2147483647, instance_group: [{ kind: 'KIND_CPU', count: 1 }], model_warmup: [{ name: 'w', ...sample }] });
  const input = (dims: number[]) => ({ INPUT0: { data_type: 'TYPE_FP32', dims, zero_data: true } });

  it('a sample past 256 MB is refused before it is allocated (dims [8193, 8192] FP32)', async () => {
    const r = await load('simple', { config: withWarmup({ batch_size: 1, inputs: input([8193, 8192]) }) });
    expect(r.status).toBe(400);
    expect(r.error).toContain("warmup setting 'w': input 'INPUT0' with dims [8193,8192]");
    await stillServes();
  });

  it('batch_size 2,000,000,000 under a huge max_batch_size is refused', async () => {
    const r = await load('simple', { config: withWarmup({ batch_size: 2_000_000_000, inputs: input([1]) }) });
    expect(r.status).toBe(400);
    expect(r.error).toContain('batch_size 2000000000 is more than the 1024 requests');
  });

  it('count 2,000,000,000 repeats is refused (they would run one after another while every other load waits)', async () => {
    const r = await load('simple', { config: withWarmup({ batch_size: 1, count: 2_000_000_000, inputs: input([1]) }) });
    expect(r.status).toBe(400);
    expect(r.error).toContain('count 2000000000 is more than the 1000 repeats');
  });
});

describe('load API: file override names', () => {
  const config = JSON.stringify({ ...SIMPLE, instance_group: [{ kind: 'KIND_CPU', count: 1 }] });
  const b64 = Buffer.from('x').toString('base64');
  for (const [what, files] of [
    ['the model folder itself', { 'file:.': b64 }],
    ['a version folder itself', { 'file:1/..': b64 }],
    ['a file that is also a folder', { 'file:1/a': b64, 'file:1/a/b': b64 }],
    ['a name past PATH_MAX', { [`file:1/${'a/'.repeat(3000)}x`]: b64 }],
    ['a component past NAME_MAX', { [`file:1/${'a'.repeat(300)}`]: b64 }],
    ['one file named twice', { 'file:1/a': b64, 'file:1/./a': b64 }],
  ] as const) {
    it(`${what}: 400 naming the parameter, never 500 showing the server's temporary path`, async () => {
      const r = await load('simple', { config, ...files });
      expect(r.status).toBe(400);
      expect(r.error).toMatch(/^Invalid file parameter 'file:/);
      expect(r.error).not.toContain('tritium-override-');
    });
  }

  it(`more than 4096 files in one load: 400 before any is written`, async () => {
    const files = Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`file:1/f${i}`, '']));
    const r = await load('simple', { config, ...files });
    expect(r.status).toBe(400);
    expect(r.error).toContain("4097 'file:' parameters; at most 4096");
    await stillServes();
  });
});

describe('load API: instances across models', () => {
  let own: TestServer;
  beforeAll(async () => {
    // The ceilings for uploaded models (4 instances each, 16 in all by default) raised out of the way:
    // the server-wide bound of every model together is what is tested here.
    const modelLimits = { ...DEFAULT_MODEL_LIMITS, instances: 1024, processes: 4096 };
    own = await startTestServer({ modelControlMode: 'explicit', allowModelFileLoad: true, modelLimits }, undefined, []);
  });
  afterAll(async () => {
    await own?.close();
  });

  /** A new model of in-process `repeat` instances (cheap, so the bound itself is what is tested). */
  const repeatModel = (name: string, count: number) =>
    fetch(`http://${own.httpUrl}/v2/repository/models/${name}/load`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        parameters: {
          config: JSON.stringify({
            backend: 'repeat',
            max_batch_size: 0,
            model_transaction_policy: { decoupled: true },
            input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [1] }],
            output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [1] }],
            instance_group: [{ kind: 'KIND_CPU', count }],
          }),
          'file:1/x': '',
        },
      }),
    }).then(async (res) => ({ status: res.status, error: ((await res.json().catch(() => ({}))) as { error?: string }).error ?? '' }));

  it('4 models of 1024 instances load; a 5th instance anywhere is refused 400 naming the bound (each model alone was within its 1024)', async () => {
    for (const name of ['r1', 'r2', 'r3', 'r4']) expect(await repeatModel(name, 1024)).toEqual({ status: 200, error: '' });
    const r = await repeatModel('r5', 1);
    expect(r.status).toBe(400);
    expect(r.error).toContain('model r5 would start 1 instances beside the 4096 loaded in the server; at most 4096 are allowed in all models together');
    // Reloading a loaded model counts its new version beside the old one until the swap.
    expect((await repeatModel('r4', 1)).status).toBe(400);
    expect(await own.http.isModelReady('r4')).toBe(true);
    // Unloading gives the instances back.
    await own.http.unloadModel('r1');
    expect(await repeatModel('r5', 1)).toEqual({ status: 200, error: '' });
  }, 120_000);
});

describe('load API: uploaded files of a failed load', () => {
  const held = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith(`tritium-override-${process.pid}-`)).length;

  it('are removed when nothing loaded from them (each failed load under a new name kept its files on disk)', async () => {
    const before = held();
    for (const name of ['junk1', 'junk2', 'junk3']) {
      const r = await load(name, { config: JSON.stringify({ ...SIMPLE, backend: 'no_such_backend' }), 'file:1/weights.bin': Buffer.alloc(1 << 20).toString('base64') });
      expect(r.status).toBe(400);
    }
    expect(held()).toBe(before);
    await stillServes();
  });
});
