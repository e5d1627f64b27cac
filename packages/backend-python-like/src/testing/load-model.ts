/**
 * `loadModel(dir)`: a model folder (config + `model.ts`) loaded into the test process itself, with
 * the server's own bundle and instance runtime (no worker, no server), so a debugger, coverage and
 * a test runner see the model as ordinary code. One call of any loaded model runs at a time (the
 * author API's log and BLS link is one per process).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InferError, type InferRequest, type InferResponse, type Logger, type ModelConfig, type ResponseSink } from '@tritium/core';
import { splitOutputs, type ExecuteResult } from '@tritium/core/backend';
import { modelConfigToJson, normalizeModelConfig, parseModelConfigText, validateModelConfig } from '@tritium/core/config';
import { CustomMetrics } from '@tritium/core/metrics';
import { type WorkerContext, type WorkerExecuteOutput, type WorkerModelInstance } from '@tritium/core/worker';
import { locateModelFile } from '../locate-model.ts';
import { removeTranspiled, transpileModel } from '../transpile.ts';
import type { PythonLikeInit } from '../worker/init.ts';
import type { ModelSpec } from '../model-api/model-spec.ts';
import { Tensor } from '../model-api/tensor.ts';
import { TritonError } from '../model-api/errors.ts';
import { runtimeLink, setRuntimeLink, type RuntimeLink } from '../model-api/runtime-link.ts';
import type { TritonModelClass } from '../model-api/model.ts';
import type { AutoCompleteConfig } from '../model-api/auto-complete.ts';
import { wireRequests } from './test-inputs.ts';
import type { LoadModelOptions, TestLogLine, TestModel, TestRequest, TestResponse } from './test-types.ts';

interface Bundle {
  readonly model: Record<string, unknown>;
  /** The bundle's copy of the author API: the same source as this package's, so its classes have their types. */
  readonly api: { readonly AutoCompleteConfig: typeof AutoCompleteConfig };
  createModelInstance(init: PythonLikeInit, ctx: WorkerContext, exports: Record<string, unknown>): Promise<WorkerModelInstance>;
}

let loads = 0;
/** Calls of loaded models run one at a time (see the file comment). */
let turn: Promise<unknown> = Promise.resolve();
function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const run = turn.then(fn, fn);
  turn = run.catch(() => undefined);
  return run;
}

async function highestVersion(modelDir: string): Promise<number> {
  const entries = await readdir(modelDir, { withFileTypes: true }).catch(() => {
    throw new InferError('NOT_FOUND', `model folder ${modelDir} not found`);
  });
  const versions = entries.filter((e) => e.isDirectory() && /^\d+$/.test(e.name)).map((e) => Number(e.name));
  if (versions.length === 0) throw new InferError('NOT_FOUND', `no version folders (1/, 2/, ...) in ${modelDir}`);
  return Math.max(...versions);
}

/** `config.pbtxt` as written, normalized (a missing file is an empty config, as auto-complete allows). */
async function readConfig(modelDir: string): Promise<ModelConfig> {
  const file = path.join(modelDir, 'config.pbtxt');
  const text = await readFile(file, 'utf8').catch(() => '');
  return normalizeModelConfig(parseModelConfigText(text, { file }), { modelName: path.basename(modelDir) });
}

/** The config as the server completes it: the model's `autoCompleteConfig` applied, validated. */
async function completeConfig(written: ModelConfig, name: string, bundle: Bundle): Promise<ModelConfig> {
  let config = written;
  const Model = (bundle.model['TritonPythonModel'] ?? bundle.model['default']) as TritonModelClass | undefined;
  if (typeof Model?.autoCompleteConfig === 'function') {
    const completed = await Model.autoCompleteConfig(new bundle.api.AutoCompleteConfig(config));
    config = normalizeModelConfig(completed.asDict(), { modelName: name });
  }
  validateModelConfig(config);
  return config;
}

function collector(lines: TestLogLine[], current: { lines: TestLogLine[] }): Logger {
  const push = (level: TestLogLine['level'], message: string): void => {
    const line = { level, message };
    lines.push(line);
    current.lines.push(line);
  };
  return { error: (m) => push('error', m), warn: (m) => push('warn', m), info: (m) => push('info', m), verbose: (_v, m) => push('verbose', m) };
}

function toResponse<S extends ModelSpec>(result: ExecuteResult | InferResponse): TestResponse<S> {
  if (InferError.is(result)) return { outputs: {} as TestResponse<S>['outputs'], parameters: {}, error: new TritonError(result.message, result.code) };
  const outputs = Object.fromEntries(result.outputs.map((t) => [t.name, Tensor.fromWire(t)]));
  return { outputs: outputs as TestResponse<S>['outputs'], parameters: { ...(result.parameters ?? {}) } };
}

/** Per-request results of one execute: a whole-batch response is split by rows, as the server's worker host does. */
function resultsOf(output: WorkerExecuteOutput, batch: readonly InferRequest[], config: ModelConfig, version: number): (ExecuteResult | InferResponse)[] {
  if ('whole' in output) {
    const parameters = output.whole.parameters;
    return splitOutputs(batch, output.whole.outputs, { model: config.name, version }).map((r) => (parameters ? { ...r, parameters } : r));
  }
  return [...output.results];
}

/** The worker context a model loaded in a test sees: its log lines collected, BLS calls answered by `options.bls`. */
function testWorkerContext(model: string, options: LoadModelOptions, log: Logger): WorkerContext {
  const metrics = new CustomMetrics();
  return {
    model,
    instanceName: `${model}_0_0`,
    log,
    infer: async (call) => {
      if (!options.bls) throw new InferError('UNAVAILABLE', `BLS call to model '${call.model}': pass { bls } to loadModel to answer it`);
      return options.bls(call);
    },
    inferStream: (call, sink) => {
      sink.complete(new InferError('UNAVAILABLE', `decoupled BLS call to model '${call.model}' is not available in tests`));
      return { cancel() {} };
    },
    metric: (op) => void metrics.apply(op),
    metricValue: async (op) => metrics.apply(op) ?? 0,
  };
}

/** A decoupled execute of `batch`, each request's responses (an error last) collected until every request completes. */
async function collectStreams<S extends ModelSpec>(
  run: NonNullable<WorkerModelInstance['executeDecoupled']>,
  batch: InferRequest[],
  signal: AbortSignal,
): Promise<TestResponse<S>[][]> {
  const streams = batch.map(() => [] as TestResponse<S>[]);
  let open = batch.length;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const sinks: ResponseSink[] = batch.map((_, i) => ({
    response: (r) => void streams[i]!.push(toResponse<S>(r)),
    complete: (error) => {
      if (error) streams[i]!.push(toResponse<S>(error));
      if (--open === 0) done();
    },
  }));
  if (open === 0) done();
  await run(batch, sinks, { signal });
  await finished;
  return streams;
}

/**
 * Loads `modelDir` (its config and the `model.ts` of its highest version, or `options.version`)
 * into this process and runs `initialize`. Type the requests and responses with the model's
 * generated Spec: `loadModel<Spec>(dir)` with `import type { Spec } from './1/model-types.js'`.
 */
export async function loadModel<S extends ModelSpec = ModelSpec>(modelDir: string, options: LoadModelOptions = {}): Promise<TestModel<S>> {
  const dir = path.resolve(modelDir);
  const version = options.version ?? (await highestVersion(dir));
  const versionDir = path.join(dir, String(version));
  // Stack traces name model.ts lines (the bundle carries an inline source map).
  process.setSourceMapsEnabled(true);
  const name = path.basename(dir);
  const written = await readConfig(dir);
  const modelFile = await locateModelFile(written, versionDir);
  const transpiled = await transpileModel(name, modelFile, { ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}), tag: `test-${process.pid}-${++loads}` });
  const bundle = (await import(pathToFileURL(transpiled.file).href)) as Bundle;
  const config = await completeConfig(written, name, bundle);
  const logs: TestLogLine[] = [];
  const current = { lines: [] as TestLogLine[] };
  const ctx = testWorkerContext(config.name, options, collector(logs, current));
  const init: PythonLikeInit = {
    bundleUrl: pathToFileURL(transpiled.file).href,
    modelFile,
    modelName: config.name,
    version,
    modelDir: dir,
    config,
    configJson: modelConfigToJson(config),
    instance: { name: ctx.instanceName, kind: 'CPU', device: 0 },
  };
  let link: RuntimeLink | undefined;
  const instance = await inTurn(async () => {
    const created = await bundle.createModelInstance(init, ctx, bundle.model);
    link = runtimeLink();
    return created;
  }).catch(async (error: unknown) => {
    await removeTranspiled(transpiled.file);
    throw error;
  });
  let calls = 0;
  let finalized = false;

  const call = <T>(fn: (batch: InferRequest[], signal: AbortSignal) => Promise<T>, requests: readonly TestRequest<S>[]) =>
    inTurn(async () => {
      if (finalized) throw new InferError('UNAVAILABLE', `model '${config.name}' was finalized`);
      const batch = wireRequests(config, version, requests as readonly Readonly<Record<string, unknown>>[], ++calls);
      setRuntimeLink(link);
      current.lines = [];
      const value = await fn(batch, new AbortController().signal);
      return { value, logs: current.lines };
    });

  return {
    config,
    version,
    logs,
    async execute(requests) {
      if (config.model_transaction_policy?.decoupled) throw new InferError('UNSUPPORTED', `model '${config.name}' is decoupled: use executeDecoupled()`);
      const { value, logs: lines } = await call(async (batch, signal) => resultsOf(await instance.execute(batch, { signal }), batch, config, version), requests);
      return { responses: value.map((r) => toResponse<S>(r)), logs: lines };
    },
    async executeDecoupled(requests) {
      if (!instance.executeDecoupled) throw new InferError('UNSUPPORTED', `model '${config.name}' is not decoupled: use execute()`);
      const run = instance.executeDecoupled.bind(instance);
      const { value, logs: lines } = await call((batch, signal) => collectStreams<S>(run, batch, signal), requests);
      return { responses: value, logs: lines };
    },
    async finalize() {
      if (finalized) return;
      finalized = true;
      await inTurn(async () => {
        setRuntimeLink(link);
        await instance.dispose?.();
      });
      await removeTranspiled(transpiled.file);
    },
  };
}
