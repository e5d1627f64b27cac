import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { InferError, type AutoCompleteSpec, type ModelConfig, type WireError } from '@tritium/core';
import { locateModelFile } from './locate-model.ts';
import { removeTranspiled, transpileModel } from './transpile.ts';

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

/** Triton's auto-complete for python-like models: the model class's static `autoCompleteConfig`, if any. */
export async function autoCompleteFromModel(spec: AutoCompleteSpec, cacheDir: string | undefined): Promise<ModelConfig> {
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
