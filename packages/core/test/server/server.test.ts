/**
 * InferenceServer over one shared repository served by real worker-hosted test backends:
 * routing errors, request validation, metadata, index, statistics, ensembles and warmup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSubBackend, identityBackend } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { SERVER_EXTENSIONS } from '../../src/server/server-metadata.ts';
import { tensorFromStrings, tensorFromTyped, typedView, type Tensor } from '../../src/tensor/tensor.ts';
import type { InferRequest } from '../../src/types.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

const f32 = (name: string, shape: number[], values?: number[]): Tensor =>
  tensorFromTyped(name, 'FP32', shape, new Float32Array(values ?? new Array(shape.reduce((a, b) => a * b, 1)).fill(1)));

const ADDSUB = `name: "addsub"
backend: "addsub"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]`;

const ENSEMBLE = `name: "ens"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [
  { model_name: "m" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "m" model_version: 1 input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUT" } }
] }`;

const OPTIONAL = `name: "opt"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 2 ] optional: true } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]`;

const STRINGS = identityConfig('str', { type: 'TYPE_STRING', dims: '[ -1 ]' });

describe('InferenceServer', () => {
  let repo: string;
  let server: InferenceServer;
  beforeAll(async () => {
    repo = await makeRepo({
      m: { config: identityConfig('m', { extra: 'version_policy: { all {} }' }), versions: { '1': {}, '2': {} } },
      addsub: { config: ADDSUB },
      ens: { config: ENSEMBLE },
      pipe: { config: ENSEMBLE.replace('name: "ens"', 'name: "pipe"\ndynamic_batching { }') },
      opt: { config: OPTIONAL },
      str: { config: STRINGS },
      bad: { config: identityConfig('bad').replace('"identity"', '"nosuch"') },
      warm: {
        config: identityConfig('warm', {
          extra: `model_warmup [ { name: "zeros" batch_size: 2 count: 2 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } },
                                 { name: "file" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: "raw" } } } ]`,
        }),
        files: { 'warmup/raw': new Uint8Array(16) },
      },
      warmfail: {
        config: identityConfig('warmfail', {
          extra: 'model_warmup [ { name: "wrong" batch_size: 1 inputs { key: "NOPE" value: { data_type: TYPE_FP32 dims: [ 4 ] random_data: true } } } ]',
        }),
      },
    });
    server = new InferenceServer({ repositories: [repo], backends: [identityBackend(), addSubBackend()], exitOnError: false });
    await server.start();
  });
  afterAll(async () => {
    await server?.stop();
    await removeRepo(repo);
  });

  const req = (model: string, inputs: Tensor[], extra: Partial<InferRequest> = {}): InferRequest => ({ id: 'r1', model, inputs, ...extra });
  const rejects = async (request: InferRequest, code: string, message: string): Promise<void> => {
    const err = await server.infer(request).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(InferError.is(err), `expected an InferError, got ${String(err)}`).toBe(true);
    expect((err as InferError).code).toBe(code);
    expect((err as InferError).message).toBe(message);
  };

  it('serves every version of the policy and routes to the highest by default', async () => {
    const res = await server.infer(req('m', [f32('INPUT0', [1, 4], [1, 2, 3, 4])]));
    expect(res.version).toBe(2);
    expect([...(typedView(res.outputs[0]!) as Float32Array)]).toEqual([1, 2, 3, 4]);
    expect((await server.infer(req('m', [f32('INPUT0', [2, 4])], { version: 1 }))).version).toBe(1);
  });

  it("answers Triton's routing errors", async () => {
    await rejects(req('nosuch', []), 'NOT_FOUND', "Request for unknown model: 'nosuch' is not found");
    await rejects(req('m', [], { version: 3 }), 'NOT_FOUND', "Request for unknown model: 'm' version 3 is not found");
    expect(server.modelReady('m', '2')).toBe(true);
    expect(server.modelReady('m', '9')).toBe(false);
    expect(() => server.modelConfig('nosuch')).toThrow("Request for unknown model: 'nosuch' is not found");
  });

  it("validates requests with Triton's messages before they are queued", async () => {
    const tag = '[request id: r1] ';
    await rejects(req('m', [f32('INPUT0', [9, 4])]), 'INVALID_ARG', `${tag}inference request batch-size must be <= 8 for 'm'`);
    await rejects(
      req('m', [f32('INPUT0', [1, 5])]),
      'INVALID_ARG',
      `${tag}unexpected shape for input 'INPUT0' for model 'm'. Expected [-1,4], got [1,5]. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.`,
    );
    await rejects(
      req('m', [tensorFromTyped('INPUT0', 'INT32', [1, 4], new Int32Array(4))]),
      'INVALID_ARG',
      `${tag}inference input 'INPUT0' data-type is 'INT32', but model 'm' expects 'FP32'`,
    );
    await rejects(
      req('m', [{ ...f32('INPUT0', [1, 4]), data: new Uint8Array(12) }]),
      'INVALID_ARG',
      `${tag}input byte size mismatch for input 'INPUT0' for model 'm'. Expected 16, got 12`,
    );
    await rejects(req('m', [f32('X', [1, 4])]), 'INVALID_ARG', `${tag}unexpected inference input 'X' for model 'm'`);
    await rejects(
      req('addsub', [tensorFromTyped('INPUT0', 'INT32', [4], new Int32Array(4))], { id: '' }),
      'INVALID_ARG',
      "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'addsub'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).",
    );
    await rejects(
      req('opt', [f32('INPUT1', [1, 2])]),
      'INVALID_ARG',
      `${tag}expected number of inputs between 1 and 2 but got 1 inputs for model 'opt'. Got input(s) ['INPUT1'], but missing required input(s) ['INPUT0']. Please provide all required input(s).`,
    );
    await rejects(
      req('m', [f32('INPUT0', [1, 4])], { outputs: [{ name: 'NOPE' }] }),
      'INVALID_ARG',
      `${tag}unexpected inference output 'NOPE' for model 'm'`,
    );
    await rejects(
      req('str', [{ ...tensorFromStrings('INPUT0', [1, 2], ['a']) }]),
      'INVALID_ARG',
      `${tag}expected 2 string elements for inference input 'INPUT0' for model 'str', got 1`,
    );
  });

  it('accepts an optional input left out, and strings', async () => {
    expect((await server.infer(req('opt', [f32('INPUT0', [1, 2])]))).outputs).toHaveLength(1);
    const res = await server.infer(req('str', [tensorFromStrings('INPUT0', [1, 2], ['a', 'bc'])]));
    expect(res.outputs[0]!.shape).toEqual([1, 2]);
  });

  it('runs an ensemble whose steps re-enter the server', async () => {
    const res = await server.infer(req('ens', [f32('IN', [2, 4], [1, 2, 3, 4, 5, 6, 7, 8])]));
    expect([...(typedView(res.outputs[0]!) as Float32Array)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('serves a pipeline-batching ensemble (dynamic_batching on the ensemble)', async () => {
    const res = await Promise.all([1, 2, 3].map((v) => server.infer(req('pipe', [f32('IN', [1, 4], [v, v, v, v])]))));
    expect(res.map((r) => (typedView(r.outputs[0]!) as Float32Array)[0])).toEqual([1, 2, 3]);
  });

  it('reports metadata as Triton does', () => {
    expect(server.serverMetadata()).toMatchObject({ name: 'triton', extensions: [...SERVER_EXTENSIONS] });
    expect(SERVER_EXTENSIONS.slice(0, 3)).toEqual(['classification', 'sequence', 'model_repository']);
    expect(server.modelMetadata('m')).toEqual({
      name: 'm',
      versions: ['1', '2'],
      platform: 'identity',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, 4] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1, 4] }],
    });
    expect(server.modelMetadata('addsub').inputs[0]!.shape).toEqual([4]);
    expect(server.modelMetadata('ens').platform).toBe('ensemble');
    expect(server.modelConfig('m').max_batch_size).toBe(8);
    expect(server.isDecoupled('m')).toBe(false);
  });

  it('reads client version strings with one grammar: a non-negative integer or empty', () => {
    expect(server.modelMetadata('m', '').versions).toEqual(['1', '2']);
    expect(server.modelConfig('m', '2').name).toBe('m');
    for (const bad of ['-1', '1.0', 'x', '99999999999999999999', ' 1']) {
      for (const call of [() => server.modelMetadata('m', bad), () => server.modelReady('m', bad), () => server.statistics('m', bad)]) {
        expect(call).toThrow(new InferError('INVALID_ARG', `failed to parse model version '${bad}': expected a non-negative integer`));
      }
    }
  });

  it('lists the repository with states and reasons, and filters ready ones', async () => {
    const index = await server.repositoryIndex();
    expect(index.filter((e) => e.name === 'm')).toEqual([
      { name: 'm', version: '1', state: 'READY', reason: '' },
      { name: 'm', version: '2', state: 'READY', reason: '' },
    ]);
    const bad = index.find((e) => e.name === 'bad')!;
    expect(bad).toMatchObject({ version: '', state: 'UNAVAILABLE' });
    expect(bad.reason).toContain("unable to find backend library for backend 'nosuch', try specifying runtime on the model configuration.");
    const failed = index.find((e) => e.name === 'warmfail')!;
    expect(failed).toMatchObject({ version: '1', state: 'UNAVAILABLE' });
    expect(failed.reason).toMatch(/^failed to run warmup sample 'wrong': /);
    expect(index.find((e) => e.name === 'warm')).toMatchObject({ state: 'READY' });
    const ready = await server.repositoryIndex({ readyOnly: true });
    expect(ready.every((e) => e.state === 'READY')).toBe(true);
    expect(ready.some((e) => e.name === 'bad')).toBe(false);
    // Strict readiness: a model that failed to load keeps the server not ready.
    expect(server.isReady()).toBe(false);
  });

  it("keeps Triton's statistics per version, with per-batch-size executions", async () => {
    const before = server.statistics('m', '1')[0]!;
    for (let i = 0; i < 3; i++) await server.infer(req('m', [f32('INPUT0', [2, 4])], { version: 1 }));
    const after = server.statistics('m', '1')[0]!;
    expect(after.name).toBe('m');
    expect(after.version).toBe('1');
    expect(after.inference_stats.success.count - before.inference_stats.success.count).toBe(3);
    expect(after.inference_count - before.inference_count).toBe(6);
    expect(after.execution_count - before.execution_count).toBe(3);
    expect(after.last_inference).toBeGreaterThan(0);
    const b2 = after.batch_stats.find((b) => b.batch_size === 2)!;
    expect(b2.compute_infer.count).toBeGreaterThanOrEqual(3);
    expect(server.statistics('m').map((s) => s.version)).toEqual(['1', '2']);
    expect(server.statistics().some((s) => s.name === 'addsub')).toBe(true);
    const metrics = server.metrics().find((x) => x.model === 'm' && x.version === '1')!;
    expect(metrics.requestSuccess).toBe(after.inference_stats.success.count);
    expect(metrics.instances).toHaveLength(1);
    expect(metrics.instances[0]).toMatchObject({ healthy: true });
    expect(metrics.loadDurationSecs).toBeGreaterThan(0);
  });

  it('reports ensemble requests in the ensemble statistics', async () => {
    const before = server.statistics('ens')[0]!.inference_stats.success.count;
    await server.infer(req('ens', [f32('IN', [1, 4])]));
    const after = server.statistics('ens')[0]!;
    expect(after.inference_stats.success.count).toBe(before + 1);
    // Triton's ensemble: one execution per successful request, its compute the composing models' sum.
    expect(after.execution_count).toBe(after.inference_stats.success.count);
    expect(after.inference_stats.compute_infer.ns).toBeGreaterThan(0);
  });
});

describe('InferenceServer start with exit-on-error', () => {
  it("rejects with every failing model's message in Triton's log wording", async () => {
    const repo = await makeRepo({
      one: { config: identityConfig('one').replace('"identity"', '"missing_backend"') },
      two: {
        config: identityConfig('two', {
          extra: 'model_warmup [ { name: "w" batch_size: 1 inputs { key: "NOPE" value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } } ]',
        }),
      },
    });
    try {
      const server = new InferenceServer({ repositories: [repo], backends: [identityBackend()] });
      const err = await server.start().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      // Nothing polls in the default mode, so the line does not say "Poll failed" (Triton's words).
      expect(err?.message).toContain("failed to read model directory 'one': unable to find backend library for backend 'missing_backend', try specifying runtime on the model configuration.");
      expect(err?.message).toMatch(/failed to load 'two' version 1: Invalid argument: failed to run warmup sample 'w': /);
      expect(server.isReady()).toBe(false);
      await expect(server.infer({ id: 'x', model: 'two', inputs: [] })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      await removeRepo(repo);
    }
  });
});
