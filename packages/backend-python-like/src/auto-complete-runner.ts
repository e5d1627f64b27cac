import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InferError, type ModelConfig, type WireError } from '@tritium/core';
import { type AutoCompleteSpec } from '@tritium/core/backend';
import { spawnWorkerInstance } from '@tritium/core/worker';
import { locateModelFile } from './locate-model.ts';
import { isGenerated } from './types/model-types.ts';
import { sandboxParameters } from './parameters.ts';
import { isolationOptions } from './sandbox-options.ts';
import { removeTranspiled, transpileModel, type TranspiledModel } from './transpile.ts';
import type { AutoCompleteInit } from './worker/auto-complete-entry.ts';

const SANDBOXED_ENTRY = new URL('./worker/auto-complete-entry.ts', import.meta.url);

/**
 * Runs in a throw-away worker (Triton runs auto_complete_config in a throw-away stub): imports the
 * model bundle (plain JS, no loader needed), calls the class's static `autoCompleteConfig` and
 * posts back the completed config.
 */
const RUNNER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  try {
    const { model, api } = await import(workerData.bundleUrl);
    const Model = model.TritonPythonModel ?? model.default;
    if (typeof Model !== 'function' || typeof Model.autoCompleteConfig !== 'function') {
      parentPort.postMessage({ config: undefined });
      return;
    }
    const returned = await Model.autoCompleteConfig(new api.AutoCompleteConfig(workerData.config));
    if (!(returned instanceof api.AutoCompleteConfig)) {
      throw new api.TritonError("auto_complete_config function for model '" + workerData.config.name + "' must return the config it was given", 'INVALID_ARG');
    }
    parentPort.postMessage({ config: returned.asDict() });
  } catch (e) {
    parentPort.postMessage({ error: { code: (e && e.code) || 'INTERNAL', message: (e && e.message) || String(e) } });
  }
})();
`;

const TIMEOUT_MS = 30_000;

/**
 * True when the model cannot have a static `autoCompleteConfig`: none of its own files names it and
 * none of its classes extends another (which could inherit one). Triton starts the throw-away stub
 * for every python model; here the worker — which imports every package the model imports (the
 * example tokenizer's, four times over at start otherwise five) — is skipped when its answer is
 * known: the config as it is.
 */
async function cannotAutoComplete(sources: readonly string[]): Promise<boolean> {
  const texts = await Promise.all(sources.map((file) => readFile(file, 'utf8').catch(() => 'autoCompleteConfig')));
  // The generated model-types.js extends the author API's Tensor, never the model class.
  return texts.every((text) => isGenerated(text) || (!text.includes('autoCompleteConfig') && !/\bextends\b/.test(text)));
}

/**
 * Runs auto-complete in a sandboxed child process, as the model's instances will run: for models
 * under process isolation, and always for uploaded files (importing the bundle runs the model's code).
 */
async function autoCompleteSandboxed(spec: AutoCompleteSpec, bundle: TranspiledModel, isolation: ReturnType<typeof isolationOptions>): Promise<ModelConfig> {
  const name = spec.config.name;
  let instance;
  try {
    instance = await spawnWorkerInstance<AutoCompleteInit>({
      entry: SANDBOXED_ENTRY,
      init: { bundleUrl: pathToFileURL(bundle.file).href, config: spec.config },
      model: name,
      instanceName: `${name}_autocomplete`,
      startTimeoutMs: TIMEOUT_MS,
      restart: { maxRestarts: 0, keepTrying: false },
      log: spec.log,
      ...(spec.workerPolicy ? { policy: spec.workerPolicy } : {}),
      ...isolation,
    });
  } catch (error) {
    const e = InferError.from(error);
    throw e.code === 'INTERNAL' ? new InferError('INTERNAL', `auto-complete of model '${name}' failed: ${e.message}`) : e;
  }
  try {
    const {
      results: [result],
    } = await instance.execute([{ id: 'autocomplete', model: name, inputs: [] }], new AbortController().signal);
    if (!result || InferError.is(result)) throw result ?? new InferError('INTERNAL', `auto-complete of model '${name}' returned nothing`);
    const json = new TextDecoder().decode(result.outputs[0]?.data);
    if (json === '') return spec.config;
    return JSON.parse(json, (_k, v: unknown) =>
      v !== null && typeof v === 'object' && typeof (v as { $bigint?: unknown }).$bigint === 'string' ? BigInt((v as { $bigint: string }).$bigint) : v,
    ) as ModelConfig;
  } finally {
    await instance.dispose();
  }
}

/** Triton's auto-complete for python-like models: the model class's static `autoCompleteConfig`, if any. */
export async function autoCompleteFromModel(
  spec: AutoCompleteSpec,
  cacheDir: string | undefined,
  defaultIsolation?: 'thread' | 'process',
): Promise<ModelConfig> {
  if (!spec.versionDir) return spec.config;
  let modelFile: string;
  try {
    modelFile = await locateModelFile(spec.config, spec.versionDir);
  } catch {
    return spec.config; // loading reports the missing file with its own message
  }
  const bundle = await transpileModel(spec.config.name, modelFile, {
    ...(cacheDir ? { cacheDir } : {}),
    tag: `autocomplete-${process.pid}-${Date.now().toString(36)}`,
  });
  if (await cannotAutoComplete(bundle.sources)) {
    await removeTranspiled(bundle.file);
    return spec.config;
  }
  const params = sandboxParameters(spec.config, { ...(defaultIsolation ? { isolation: defaultIsolation } : {}), forceProcess: spec.uploadedFiles === true });
  if (params.isolation === 'process') {
    try {
      return await autoCompleteSandboxed(spec, bundle, isolationOptions(params, spec.modelDir, bundle));
    } finally {
      await removeTranspiled(bundle.file);
    }
  }
  const worker = new Worker(RUNNER, {
    eval: true,
    workerData: { bundleUrl: pathToFileURL(bundle.file).href, config: spec.config },
    resourceLimits: { maxOldGenerationSizeMb: 512 },
    stdout: false,
  });
  try {
    const reply = await new Promise<{ config?: ModelConfig; error?: WireError }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new InferError('INTERNAL', `auto-complete of model '${spec.config.name}' did not finish in ${TIMEOUT_MS / 1000} s`)),
        TIMEOUT_MS,
      );
      worker.once('message', (m: { config?: ModelConfig; error?: WireError }) => {
        clearTimeout(timer);
        resolve(m);
      });
      worker.once('error', (e) => {
        clearTimeout(timer);
        reject(new InferError('INTERNAL', `auto-complete of model '${spec.config.name}' failed: ${e.message}`));
      });
      worker.once('exit', (code) => {
        clearTimeout(timer);
        reject(new InferError('INTERNAL', `auto-complete of model '${spec.config.name}' exited with code ${code}`));
      });
    });
    if (reply.error) throw InferError.fromWire(reply.error);
    return reply.config ?? spec.config;
  } finally {
    await worker.terminate();
    await removeTranspiled(bundle.file);
  }
}
