/**
 * The backend SPI's contract (backend/spi.ts), as a suite every backend runs: a model loads and
 * gives instances; `execute` answers a batch with exactly one result per request, in order; a
 * request the model refuses fails alone, as an InferError with a Triton code; a model the backend
 * cannot load is refused with an InferError; an aborted execute settles (CANCELLED) and the instance
 * serves on; disposed instances answer with an InferError instead of hanging.
 *
 * The subject supplies one identity model in its own format (OUTPUT0 = INPUT0, FP32, dims [-1],
 * max_batch_size 8) and one request that model refuses; the suite loads it the way the server does
 * (parse, auto-complete, normalize, loadModel, createInstance) into a temp folder it removes.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Backend, ExecuteResult, ModelInstance } from '../../backend/spi.ts';
import { ERROR_CODES, InferError } from '../../errors.ts';
import { tensorFromTyped, typedView, type Tensor } from '../../tensor/tensor.ts';
import type { InferRequest, InferResponse } from '../../types.ts';
import { loadTestInstance, type LoadedTestInstance } from '../load-instance.ts';
import type { ConformanceCase, ConformanceSuite } from './conformance-case.ts';

export interface BackendConformanceSubject {
  readonly backend: Backend;
  /** The `backend` field of a config served by it (e.g. `onnxruntime`). */
  readonly backendName: string;
  /**
   * Writes the identity model's files into `modelDir` (its version folder is `modelDir/1`):
   * OUTPUT0 = INPUT0, FP32, dims [-1], max_batch_size 8. Returns the config.pbtxt text (the suite
   * sets `name`); a backend that auto-completes may leave inputs and outputs out.
   */
  writeIdentityModel(modelDir: string): string | Promise<string>;
  /** A request to the identity model `model` that the model answers with an error, for that request alone. */
  refusedRequest(model: string): InferRequest;
  /**
   * Writes a model `loadModel` (or `createInstance`) must refuse, e.g. a corrupt model file, and
   * returns its config text. Omitted by backends that read no model file.
   */
  writeBrokenModel?(modelDir: string): string | Promise<string>;
}

const ROW = 3;
let ids = 0;

/** A request of `rows` rows of 3 FP32 values each, distinct per request. */
function identityRequest(model: string, rows: number): InferRequest {
  const seed = ids++;
  const values = Float32Array.from({ length: rows * ROW }, (_, i) => seed * 100 + i + 0.5);
  return { id: `conformance-${seed}`, model, inputs: [tensorFromTyped('INPUT0', 'FP32', [rows, ROW], values)] };
}

function isResponse(result: ExecuteResult): result is InferResponse {
  return !InferError.is(result);
}

function assertInferError(value: unknown, where: string): asserts value is InferError {
  assert.ok(InferError.is(value), `${where}: expected an InferError, got ${value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value)}`);
  assert.ok(ERROR_CODES.includes(value.code), `${where}: '${value.code}' is not one of Triton's codes`);
}

/** The response to `request` echoes its INPUT0 as OUTPUT0, same shape and values. */
function assertEchoes(result: ExecuteResult, request: InferRequest, where: string): void {
  assert.ok(isResponse(result), `${where}: expected a response, got ${InferError.is(result) ? `${result.code}: ${result.message}` : String(result)}`);
  assert.equal(result.id, request.id, `${where}: the response answers request '${result.id}', not '${request.id}'`);
  const input = request.inputs[0]!;
  const output = result.outputs.find((t: Tensor) => t.name === 'OUTPUT0');
  assert.ok(output, `${where}: no OUTPUT0 in the response (outputs: ${result.outputs.map((t) => t.name).join(', ')})`);
  assert.equal(output.datatype, 'FP32', `${where}: OUTPUT0 datatype`);
  assert.deepEqual([...output.shape], [...input.shape], `${where}: OUTPUT0 shape`);
  assert.deepEqual([...(typedView(output) as Float32Array)], [...(typedView(input) as Float32Array)], `${where}: OUTPUT0 values`);
}

/** The execute's results, or the InferError it rejected with. */
async function settle(instance: ModelInstance, batch: readonly InferRequest[], signal: AbortSignal): Promise<readonly ExecuteResult[] | InferError> {
  try {
    const { results } = await instance.execute(batch, signal);
    return results;
  } catch (err) {
    assertInferError(err, 'a rejected execute');
    return err;
  }
}

/** What the cases share: the subject, the temp folders and the models loaded, removed by `close`. */
class BackendFixture {
  readonly roots: string[] = [];
  readonly loaded: LoadedTestInstance[] = [];
  private shared: Promise<LoadedTestInstance> | undefined;

  constructor(readonly subject: BackendConformanceSubject) {}

  /** A model folder `name` (version folder `1`) in a new temp folder, its files and config written by `write`. */
  async modelFolder(name: string, write: (dir: string) => string | Promise<string>): Promise<{ modelDir: string; versionDir: string; config: string }> {
    const root = await mkdtemp(path.join(tmpdir(), 'tritium-conformance-'));
    this.roots.push(root);
    const modelDir = path.join(root, name);
    const versionDir = path.join(modelDir, '1');
    await mkdir(versionDir, { recursive: true });
    const config = await write(modelDir);
    await writeFile(path.join(modelDir, 'config.pbtxt'), config);
    return { modelDir, versionDir, config };
  }

  /** The subject's identity model, loaded as `name` with one instance. */
  async load(name: string): Promise<LoadedTestInstance> {
    const { modelDir, versionDir, config } = await this.modelFolder(name, (dir) => this.subject.writeIdentityModel(dir));
    const model = await loadTestInstance(this.subject.backend, name, config, {
      backendName: this.subject.backendName,
      modelDir,
      versionDir,
      autoComplete: this.subject.backend.autoComplete !== undefined,
    });
    this.loaded.push(model);
    return model;
  }

  /** One identity model the cases share. */
  identity(): Promise<LoadedTestInstance> {
    return (this.shared ??= this.load('conformance_identity'));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.loaded.splice(0).map((m) => m.dispose()));
    await Promise.all(this.roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
  }
}

const CASES: readonly { readonly name: string; run(f: BackendFixture): Promise<void> }[] = [
  {
    name: 'loadModel and createInstance give an instance for the model',
    async run(f) {
      const { config, instance } = await f.identity();
      assert.equal(config.max_batch_size, 8, 'the completed config keeps max_batch_size 8');
      assert.deepEqual(config.input.map((i) => i.name), ['INPUT0'], 'the completed config has INPUT0');
      assert.deepEqual(config.output.map((o) => o.name), ['OUTPUT0'], 'the completed config has OUTPUT0');
      assert.ok(instance, 'createInstance gave an instance');
      assert.notEqual(instance.healthy, false, 'a new instance is healthy');
    },
  },
  {
    name: 'execute answers a batch: one result per request, in order, rows kept',
    async run(f) {
      const { config, instance } = await f.identity();
      const batch = [identityRequest(config.name, 1), identityRequest(config.name, 3), identityRequest(config.name, 2)];
      const { results } = await instance.execute(batch, new AbortController().signal);
      assert.equal(results.length, batch.length, 'exactly one result per request');
      batch.forEach((request, i) => assertEchoes(results[i]!, request, `result ${i}`));
    },
  },
  {
    name: 'a request the model refuses fails alone, as an InferError with a Triton code',
    async run(f) {
      const { config, instance } = await f.identity();
      const batch = [identityRequest(config.name, 1), f.subject.refusedRequest(config.name), identityRequest(config.name, 2)];
      const { results } = await instance.execute(batch, new AbortController().signal);
      assert.equal(results.length, batch.length, 'exactly one result per request');
      assertInferError(results[1], 'the refused request');
      assertEchoes(results[0]!, batch[0]!, 'the request before it');
      assertEchoes(results[2]!, batch[2]!, 'the request after it');
    },
  },
  {
    name: 'an execute whose signal is already aborted is answered CANCELLED, and the instance serves on',
    async run(f) {
      const { config, instance } = await f.identity();
      const aborted = new AbortController();
      aborted.abort();
      const outcome = await settle(instance, [identityRequest(config.name, 1)], aborted.signal);
      const errors = InferError.is(outcome) ? [outcome] : outcome;
      for (const e of errors) {
        assertInferError(e, 'the aborted request');
        assert.equal(e.code, 'CANCELLED', `the aborted request: ${e.message}`);
      }
      const next = identityRequest(config.name, 2);
      const { results } = await instance.execute([next], new AbortController().signal);
      assertEchoes(results[0]!, next, 'the next execute');
    },
  },
  {
    name: 'an execute aborted while it runs settles, each request answered or CANCELLED, and the instance serves on',
    async run(f) {
      const { config, instance } = await f.identity();
      const controller = new AbortController();
      const batch = [identityRequest(config.name, 2), identityRequest(config.name, 1)];
      const running = settle(instance, batch, controller.signal);
      controller.abort();
      const outcome = await running;
      if (InferError.is(outcome)) assert.equal(outcome.code, 'CANCELLED', `the aborted execute: ${outcome.message}`);
      else {
        assert.equal(outcome.length, batch.length, 'exactly one result per request');
        outcome.forEach((result, i) => {
          if (InferError.is(result)) assert.equal(result.code, 'CANCELLED', `result ${i}: ${result.message}`);
          else assertEchoes(result, batch[i]!, `result ${i}`);
        });
      }
      const next = identityRequest(config.name, 1);
      const { results } = await instance.execute([next], new AbortController().signal);
      assertEchoes(results[0]!, next, 'the next execute');
    },
  },
  {
    name: 'loadModel refuses a model it cannot load with an InferError',
    async run(f) {
      if (!f.subject.writeBrokenModel) return;
      const { modelDir, versionDir, config } = await f.modelFolder('conformance_broken', (dir) => f.subject.writeBrokenModel!(dir));
      let failure: unknown;
      try {
        f.loaded.push(await loadTestInstance(f.subject.backend, 'conformance_broken', config, { backendName: f.subject.backendName, modelDir, versionDir }));
      } catch (err) {
        failure = err;
      }
      assert.ok(failure !== undefined, 'the broken model loaded');
      assertInferError(failure, 'the load of a broken model');
    },
  },
  {
    name: 'dispose releases the instance and the model; an execute after it answers with an InferError',
    async run(f) {
      const model = await f.load('conformance_dispose');
      const request = identityRequest(model.config.name, 1);
      assertEchoes((await model.instance.execute([request], new AbortController().signal)).results[0]!, request, 'before dispose');
      await model.dispose();
      f.loaded.splice(f.loaded.indexOf(model), 1);
      const outcome = await settle(model.instance, [identityRequest(model.config.name, 1)], new AbortController().signal);
      const errors = InferError.is(outcome) ? [outcome] : outcome;
      for (const e of errors) assertInferError(e, 'an execute after dispose');
    },
  },
];

export function backendConformanceSuite(subject: BackendConformanceSubject): ConformanceSuite {
  const fixture = new BackendFixture(subject);
  return {
    cases: CASES.map((c): ConformanceCase => ({ name: c.name, run: () => c.run(fixture) })),
    close: () => fixture.close(),
  };
}
