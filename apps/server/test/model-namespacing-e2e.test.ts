/**
 * Triton's qa/L0_model_namespacing through a real `tritium serve --model-namespacing=true` with two
 * repositories (addsub_repo, subadd_repo), in POLL and EXPLICIT mode, its four cases:
 * no_duplication, duplication (both repositories hold `composing_model`), ensemble_duplication (both
 * hold `simple_ensemble`) and dynamic_resolution (a composing model removed and put back while the
 * server runs). Its ensemble configs are Triton's; its Python models are ported to model.ts with the
 * same behaviour (auto-completed I/O; OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, or the
 * reverse for subadd). no_duplication also runs qa/L0_metrics' namespacing case: each repository
 * appears as a `namespace` label. In explicit mode, as in Triton's test, a model answers as soon as
 * its load returns; in poll mode the test waits for the poll instead of sleeping.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GrpcInferenceServerClient, HttpInferenceServerClient, InferInput } from '@tritium/client';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

/** Triton's ensemble config of the QA cases, its one step naming `composing`. */
const ensembleConfig = (composing: string): string => `platform: "ensemble"
max_batch_size: 0
version_policy: { all { }}
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
input [ { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
ensemble_scheduling {
  step [
    {
      model_name: "${composing}"
      model_version: -1
      input_map { key: "INPUT0" value: "INPUT0" }
      input_map { key: "INPUT1" value: "INPUT1" }
      output_map { key: "OUTPUT0" value: "OUTPUT0" }
      output_map { key: "OUTPUT1" value: "OUTPUT1" }
    }
  ]
}
`;

/** QA's python_addsub / python_subadd as model.ts: auto-completes its I/O when the config has none. */
const composingModel = (sign: 1 | -1): string => `import { InferenceResponse, Tensor, getInputTensorByName, type AutoCompleteConfig, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  static autoCompleteConfig(config: AutoCompleteConfig): AutoCompleteConfig {
    const c = config.asDict();
    if ((c.input ?? []).length !== 0 || (c.output ?? []).length !== 0) return config;
    for (const name of ['INPUT0', 'INPUT1']) config.addInput({ name, data_type: 'TYPE_INT32', dims: [16] });
    for (const name of ['OUTPUT0', 'OUTPUT1']) config.addOutput({ name, data_type: 'TYPE_INT32', dims: [16] });
    return config;
  }
  execute(requests: InferenceRequest[]): InferenceResponse[] {
    return requests.map((r) => {
      const a = getInputTensorByName(r, 'INPUT0')!.data as Int32Array;
      const b = getInputTensorByName(r, 'INPUT1')!.data as Int32Array;
      const add = a.map((x, i) => x + b[i]!);
      const sub = a.map((x, i) => x - b[i]!);
      return new InferenceResponse([new Tensor('OUTPUT0', ${sign === 1 ? 'add' : 'sub'}, [16]), new Tensor('OUTPUT1', ${sign === 1 ? 'sub' : 'add'}, [16])]);
    });
  }
}
`;

type Case = 'no_duplication' | 'duplication' | 'ensemble_duplication' | 'dynamic_resolution';

/** The QA case's two repositories: models (ensembles by their step, composing models by behaviour). */
const LAYOUT: Record<Case, Record<'addsub_repo' | 'subadd_repo', Record<string, { ensembleOf: string } | { sign: 1 | -1 }>>> = {
  no_duplication: {
    addsub_repo: { simple_addsub: { ensembleOf: 'composing_addsub' }, composing_addsub: { sign: 1 } },
    subadd_repo: { simple_subadd: { ensembleOf: 'composing_subadd' }, composing_subadd: { sign: -1 } },
  },
  duplication: {
    addsub_repo: { simple_addsub: { ensembleOf: 'composing_model' }, composing_model: { sign: 1 } },
    subadd_repo: { simple_subadd: { ensembleOf: 'composing_model' }, composing_model: { sign: -1 } },
  },
  dynamic_resolution: {
    addsub_repo: { simple_addsub: { ensembleOf: 'composing_model' }, composing_model: { sign: 1 } },
    subadd_repo: { simple_subadd: { ensembleOf: 'composing_model' }, composing_model: { sign: -1 } },
  },
  ensemble_duplication: {
    addsub_repo: { simple_ensemble: { ensembleOf: 'composing_addsub' }, composing_addsub: { sign: 1 } },
    subadd_repo: { simple_ensemble: { ensembleOf: 'composing_subadd' }, composing_subadd: { sign: -1 } },
  },
};

function writeRepos(root: string, which: Case): void {
  for (const [repo, models] of Object.entries(LAYOUT[which])) {
    for (const [name, model] of Object.entries(models)) {
      const dir = path.join(root, repo, name);
      mkdirSync(path.join(dir, '1'), { recursive: true });
      if ('ensembleOf' in model) writeFileSync(path.join(dir, 'config.pbtxt'), ensembleConfig(model.ensembleOf));
      else writeFileSync(path.join(dir, '1', 'model.ts'), composingModel(model.sign));
    }
  }
}

const data = Int32Array.from({ length: 16 }, (_, i) => i);
const inputs = () => [new InferInput('INPUT0', [16], 'INT32').setData(data), new InferInput('INPUT1', [16], 'INT32').setData(data)];
const ADD = [...data].map((x) => x + x);
const SUB = [...data].map((x) => x - x);

async function expectAddSub(client: HttpInferenceServerClient, model: string): Promise<void> {
  const r = await client.infer(model, inputs());
  expect([[...r.asTypedArray('OUTPUT0', 'INT32')], [...r.asTypedArray('OUTPUT1', 'INT32')]], `${model} as addsub`).toEqual([ADD, SUB]);
}

async function expectSubAdd(client: HttpInferenceServerClient, model: string): Promise<void> {
  const r = await client.infer(model, inputs());
  expect([[...r.asTypedArray('OUTPUT0', 'INT32')], [...r.asTypedArray('OUTPUT1', 'INT32')]], `${model} as subadd`).toEqual([SUB, ADD]);
}

async function expectAmbiguous(client: HttpInferenceServerClient, model: string): Promise<void> {
  const err = await client.infer(model, inputs()).then(
    () => undefined,
    (e: unknown) => e as Error & { status?: string },
  );
  expect(err?.message, `${model} is ambiguous`).toContain('ambiguity');
  expect(err?.message).toContain(`There are 2 identifiers of model '${model}' in global map, model namespace must be provided to resolve ambiguity.`);
  expect(err?.status).toBe('400');
}

const until = async (check: () => Promise<void>, ms = 20_000): Promise<void> => {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
};

for (const mode of ['poll', 'explicit'] as const) {
  describe(`qa/L0_model_namespacing, ${mode} mode`, () => {
    let root: string | undefined;
    let serve: ServeProcess | undefined;
    let client: HttpInferenceServerClient | undefined;
    afterEach(async () => {
      client?.close();
      await serve?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    const start = async (which: Case): Promise<HttpInferenceServerClient> => {
      root = mkdtempSync(path.join(os.tmpdir(), `tritium-ns-${which}-`));
      writeRepos(root, which);
      const modeArgs = mode === 'poll' ? ['--model-control-mode=poll', '--repository-poll-secs=1'] : ['--model-control-mode=explicit'];
      serve = startServeProcess([
        '--model-namespacing=true',
        `--model-repository=${path.join(root, 'addsub_repo')}`,
        `--model-repository=${path.join(root, 'subadd_repo')}`,
        ...modeArgs,
      ]);
      const ports = await serve.started;
      client = new HttpInferenceServerClient(`127.0.0.1:${ports.http}`);
      expect(await client.isServerLive()).toBe(true);
      expect(await client.isServerReady()).toBe(true);
      return client;
    };

    it('no_duplication: every model is visible and served', async () => {
      const c = await start('no_duplication');
      if (mode === 'explicit') for (const m of ['simple_addsub', 'simple_subadd']) await c.loadModel(m);
      for (const m of ['simple_addsub', 'composing_addsub']) await expectAddSub(c, m);
      for (const m of ['simple_subadd', 'composing_subadd']) await expectSubAdd(c, m);
      // qa/L0_metrics test_model_namespacing_label_with_namespace_on: a label per repository.
      const metrics = await (await fetch(`http://127.0.0.1:${(await serve!.started).metrics}/metrics`)).text();
      for (const repo of ['addsub_repo', 'subadd_repo']) expect(metrics).toContain(`namespace="${path.join(root!, repo)}"`);
    });

    it('duplication: each ensemble uses the composing model of its own repository; the shared name is ambiguous', async () => {
      const c = await start('duplication');
      if (mode === 'explicit') for (const m of ['simple_addsub', 'simple_subadd']) await c.loadModel(m);
      await expectAddSub(c, 'simple_addsub');
      await expectSubAdd(c, 'simple_subadd');
      await expectAmbiguous(c, 'composing_model');
      // Through gRPC the same refusal is INVALID_ARGUMENT; a name no repository holds is 400 too.
      const grpc = new GrpcInferenceServerClient(`127.0.0.1:${(await serve!.started).grpc}`);
      try {
        const viaGrpc = await grpc.infer('composing_model', inputs()).then(
          () => undefined,
          (e: unknown) => e as Error & { status?: string },
        );
        expect([viaGrpc?.status, viaGrpc?.message]).toEqual(['StatusCode.INVALID_ARGUMENT', "There are 2 identifiers of model 'composing_model' in global map, model namespace must be provided to resolve ambiguity."]);
      } finally {
        grpc.close();
      }
      const unknown = await c.infer('nothere', inputs()).then(
        () => undefined,
        (e: unknown) => e as Error & { status?: string },
      );
      expect([unknown?.status, unknown?.message]).toEqual(['400', "Request for unknown model: 'nothere' is not found"]);
      // Each ensemble's config names the repository its step resolved to (Triton's model_namespace).
      for (const [ensemble, repo] of [['simple_addsub', 'addsub_repo'], ['simple_subadd', 'subadd_repo']] as const) {
        const config = (await c.getModelConfig(ensemble)) as { ensemble_scheduling?: { step: { model_namespace?: string }[] } };
        expect(config.ensemble_scheduling?.step.map((st) => st.model_namespace)).toEqual([path.join(root!, repo)]);
      }
      const index = await c.getModelRepositoryIndex();
      expect(index.filter((e: { name: string }) => e.name === 'composing_model')).toHaveLength(2);
      const metrics = await (await fetch(`http://127.0.0.1:${(await serve!.started).metrics}/metrics`)).text();
      expect(metrics).toContain(`nv_inference_request_success{model="composing_model",version="1",namespace="${path.join(root!, 'addsub_repo')}"} 1`);
    });

    it('ensemble_duplication: same-named ensembles each use their own step; their name is ambiguous', async () => {
      const c = await start('ensemble_duplication');
      if (mode === 'explicit') await c.loadModel('simple_ensemble');
      await expectAddSub(c, 'composing_addsub');
      await expectSubAdd(c, 'composing_subadd');
      await expectAmbiguous(c, 'simple_ensemble');
    });

    it('dynamic_resolution: an ensemble falls back to the other repository and back to its own', async () => {
      const c = await start('dynamic_resolution');
      const before = path.join(root!, 'addsub_repo', 'composing_model');
      const aside = path.join(root!, 'composing_model');
      // Step 1: composing_model leaves addsub_repo; both ensembles use subadd_repo's.
      renameSync(before, aside);
      if (mode === 'explicit') for (const m of ['simple_addsub', 'simple_subadd']) await c.loadModel(m);
      const step1 = async () => {
        for (const m of ['simple_subadd', 'simple_addsub', 'composing_model']) await expectSubAdd(c, m);
      };
      await (mode === 'poll' ? until(step1) : step1());
      // Step 2: it comes back; in explicit mode loading one ensemble reloads what it resolves to.
      renameSync(aside, before);
      if (mode === 'explicit') await c.loadModel('simple_addsub');
      const step2 = async () => {
        await expectAddSub(c, 'simple_addsub');
        await expectSubAdd(c, 'simple_subadd');
        await expectAmbiguous(c, 'composing_model');
      };
      await (mode === 'poll' ? until(step2) : step2());
    });
  });
}
