/**
 * Model namespacing's lookups and messages as Triton's ModelRepositoryManager gives them: a name no
 * repository holds is INVALID_ARG; a name held in two repositories is ambiguous on every per-model
 * call; messages print a model as its identifier `<repository>::<name>`; an ensemble's steps,
 * and the steps of the ensembles those reach, resolve from the repository of the ensemble naming them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { identityBackend } from '@tritium/core/testing';
import { InferError } from '../../src/errors.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { tensorFromTyped } from '../../src/tensor/tensor.ts';
import { identityConfig, makeRepo, removeRepo } from './repo-fixture.ts';

const ensembleConfig = (name: string, step: string): string => `name: "${name}"
platform: "ensemble"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [ { model_name: "${step}" model_version: -1 input_map { key: "INPUT0" value: "INPUT0" } output_map { key: "OUTPUT0" value: "OUTPUT0" } } ] }
`;

type Models = Parameters<typeof makeRepo>[0];
let repos: string[] = [];
let server: InferenceServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
  for (const r of repos) await removeRepo(r);
  repos = [];
});

async function serve(models: readonly Models[], mode: 'none' | 'explicit' = 'none'): Promise<{ server: InferenceServer; repos: string[] }> {
  repos = await Promise.all(models.map((m) => makeRepo(m)));
  server = new InferenceServer({ repositories: repos, backends: [identityBackend()], modelNamespacing: true, modelControlMode: mode, exitOnError: false });
  await server.start();
  return { server, repos };
}

const infer = (s: InferenceServer, model: string, version?: number) =>
  s.infer({ id: 'n', model, ...(version ? { version } : {}), inputs: [tensorFromTyped('INPUT0', 'FP32', [1, 4], new Float32Array([1, 2, 3, 4]))] });

async function errorOf(p: Promise<unknown> | (() => unknown)): Promise<InferError> {
  const e = await (typeof p === 'function' ? Promise.resolve().then(p) : p).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(InferError.is(e), `expected an InferError, got ${String(e)}`).toBe(true);
  return e as InferError;
}

const AMBIGUOUS = "There are 2 identifiers of model 'm' in global map, model namespace must be provided to resolve ambiguity.";

describe('--model-namespacing lookups', () => {
  it('refuses a name no repository holds as INVALID_ARG, and an ambiguous name on every per-model call', async () => {
    const { server: s } = await serve([{ m: { config: identityConfig('m') } }, { m: { config: identityConfig('m') } }]);
    const unknown = await errorOf(infer(s, 'nothere'));
    expect([unknown.code, unknown.message]).toEqual(['INVALID_ARG', "Request for unknown model: 'nothere' is not found"]);
    for (const call of [() => infer(s, 'm'), () => s.modelMetadata('m'), () => s.modelConfig('m'), () => s.statistics('m')]) {
      const err = await errorOf(call);
      expect([err.code, err.message]).toEqual(['INVALID_ARG', AMBIGUOUS]);
    }
    expect(s.modelReady('m')).toBe(false);
    // Both are loaded and listed; statistics of every model list both.
    expect((await s.repositoryIndex()).filter((e) => e.name === 'm').map((e) => e.state)).toEqual(['READY', 'READY']);
    expect(s.statistics().filter((st) => st.name === 'm')).toHaveLength(2);
    // qa/L0_metrics: each model's metrics carry its repository as `namespace`.
    expect(s.metrics().filter((m) => m.model === 'm').map((m) => m.namespace).sort()).toEqual([...repos].sort());
  });

  it('has no namespace without --model-namespacing (qa/L0_metrics, namespace off)', async () => {
    repos = [await makeRepo({ m: { config: identityConfig('m') } })];
    server = new InferenceServer({ repositories: repos, backends: [identityBackend()] });
    await server.start();
    expect(server.metrics().map((m) => [m.model, 'namespace' in m])).toEqual([['m', false]]);
  });

  it("names a model by its identifier in the lifecycle's messages", async () => {
    const { server: s, repos: [a] } = await serve([{ only: { config: identityConfig('only') } }]);
    const err = await errorOf(infer(s, 'only', 9));
    expect([err.code, err.message]).toEqual(['NOT_FOUND', `Request for unknown model: '${a}::only' version 9 is not found`]);
  });

  it('answers INVALID_ARG for a name unloaded from every repository (Triton drops it from its global map)', async () => {
    const { server: s } = await serve([{ m: { config: identityConfig('m') }, solo: { config: identityConfig('solo') } }, { m: { config: identityConfig('m') } }], 'explicit');
    await s.loadModel('m');
    await s.loadModel('solo');
    expect(await errorOf(infer(s, 'm'))).toMatchObject({ code: 'INVALID_ARG', message: AMBIGUOUS });
    await s.unloadModel('m');
    await s.unloadModel('solo');
    for (const name of ['m', 'solo']) {
      for (const call of [() => infer(s, name), () => s.statistics(name)]) {
        const err = await errorOf(call);
        expect([err.code, err.message]).toEqual(['INVALID_ARG', `Request for unknown model: '${name}' is not found`]);
      }
    }
  });
});

describe('--model-namespacing ensembles', () => {
  it("shows in each step's model_namespace the repository its model resolves to, as Triton's config does", async () => {
    const { server: s, repos: [a, b] } = await serve([{ e: { config: ensembleConfig('e', 'm') }, m: { config: identityConfig('m') } }, { f: { config: ensembleConfig('f', 'only') }, only: { config: identityConfig('only') } }]);
    expect(s.modelConfig('e').ensemble_scheduling?.step.map((st) => st.model_namespace)).toEqual([a]);
    expect(s.modelConfig('f').ensemble_scheduling?.step.map((st) => st.model_namespace)).toEqual([b]);
  });

  it("refuses a step ambiguous from the ensemble's repository, naming the ensemble by identifier", async () => {
    const { server: s, repos: [a] } = await serve([{ e: { config: ensembleConfig('e', 'm') } }, { m: { config: identityConfig('m') } }, { m: { config: identityConfig('m') } }]);
    const err = await errorOf(infer(s, 'e'));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toContain(`ensemble ${a}::e contains models that are not available or ambiguous: m`);
  });

  it('names both identifiers when a step model is not valid', async () => {
    const broken = identityConfig('bad').replace('"identity"', '"identiti"');
    const { server: s, repos: [a, b] } = await serve([{ e: { config: ensembleConfig('e', 'bad') } }, { bad: { config: broken } }]);
    const err = await errorOf(infer(s, 'e'));
    expect(err.message).toContain(`ensemble '${a}::e' depends on '${b}::bad' which is not valid. Model '${b}::bad' failed with error: unable to find backend library for backend 'identiti'`);
  });

  it("names identifiers in the ensemble's tensor checks", async () => {
    const wrongType = identityConfig('m', { type: 'TYPE_INT32' });
    const { server: s, repos: [a, b] } = await serve([{ e: { config: ensembleConfig('e', 'm') } }, { m: { config: wrongType } }]);
    const err = await errorOf(infer(s, 'e'));
    expect(err.message).toContain(
      `in ensemble ${a}::e, ensemble tensor INPUT0: inconsistent data type: TYPE_FP32 is inferred from model ${a}::e while TYPE_INT32 is inferred from model ${b}::m`,
    );
  });

  it("resolves the steps of an ensemble it reaches from that ensemble's repository: no false cycle", async () => {
    // a (repository 1) -> b (only in repository 2) -> a, which repository 2 holds itself: a plain model.
    const { server: s } = await serve([{ a: { config: ensembleConfig('a', 'b') } }, { b: { config: ensembleConfig('b', 'a') }, a: { config: identityConfig('a') } }]);
    // `a` is ambiguous to a client; `b` is not, and runs repository 2's `a`.
    const out = await infer(s, 'b');
    expect(Buffer.from(out.outputs[0]!.data as Uint8Array)).toEqual(Buffer.from(new Float32Array([1, 2, 3, 4]).buffer));
    const index = await s.repositoryIndex();
    expect(index.filter((e) => e.name === 'a').map((e) => [e.state, e.reason])).toEqual([
      ['READY', ''],
      ['READY', ''],
    ]);
  });

  it('reports a cycle across repositories with identifiers', async () => {
    const { server: s, repos: [a, b] } = await serve([{ x: { config: ensembleConfig('x', 'y') } }, { y: { config: ensembleConfig('y', 'x') } }]);
    const err = await errorOf(infer(s, 'x'));
    expect(err.message).toContain(`circular dependency between ensembles: ${a}::x -> ... -> ${b}::y -> ${a}::x`);
  });
});
