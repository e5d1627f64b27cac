import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InferError, type InferRequest, type InferResponse } from '@tritium/core';
import { instanceWorkerOptions, type BackendModel, type InstanceSpec, type LoadSpec, type ModelInstance } from '@tritium/core/backend';
import { modelConfigToJson } from '@tritium/core/config';
import { spawnWorkerInstance, workerBounds, type ReadinessPolicy, type WorkerRestartPolicy } from '@tritium/core/worker';
import type { SandboxParameters } from './parameters.ts';
import { isolationOptions } from './sandbox-options.ts';
import { removeTranspiled, type TranspiledModel } from './transpile.ts';
import type { PythonLikeInit } from './worker/init.ts';

const ENTRY_URL = new URL('./worker/instance-entry.ts', import.meta.url);

export interface PythonLikeModelOptions {
  readonly restart?: WorkerRestartPolicy;
  /** The model's type check, run beside its instances' start: an instance starts only once it passed. */
  readonly checked?: Promise<void>;
  /** Each instance opens Node's inspector (see PythonLikeBackendOptions.inspect). */
  readonly inspect?: boolean;
  /** How the model's `isReady()` is asked, when it has one (see parameters.ts readinessPolicy). */
  readonly readiness?: ReadinessPolicy;
}

/**
 * One loaded version of a `model.ts`: owns its transpiled bundle (deleted on dispose) and starts one
 * worker per instance. Each worker imports the bundle itself, so no two instances, versions or loads
 * share module state.
 */
export class PythonLikeModel implements BackendModel {
  readonly #spec: LoadSpec;
  readonly #bundle: TranspiledModel;
  readonly #modelFile: string;
  readonly #params: SandboxParameters;
  readonly #options: PythonLikeModelOptions;

  constructor(spec: LoadSpec, modelFile: string, bundle: TranspiledModel, params: SandboxParameters, options: PythonLikeModelOptions) {
    // Awaited by each instance; a model whose instances never start must not leave it unhandled.
    options.checked?.catch(() => undefined);
    this.#spec = spec;
    this.#modelFile = modelFile;
    this.#bundle = bundle;
    this.#params = params;
    this.#options = options;
  }

  /** BLS from an instance: through the server (cycles and cancellation are the scheduler's and the worker host's). */
  #bls(request: InferRequest): Promise<InferResponse> {
    const infer = this.#spec.infer;
    if (!infer) return Promise.reject(new InferError('UNSUPPORTED', `BLS is not available to model '${this.#spec.config.name}' (no server to route it)`));
    return infer(request);
  }

  async createInstance(spec: InstanceSpec): Promise<ModelInstance> {
    const { config, version, modelDir } = this.#spec;
    const init: PythonLikeInit = {
      bundleUrl: pathToFileURL(this.#bundle.file).href,
      modelFile: this.#modelFile,
      modelName: config.name,
      version,
      modelDir: path.resolve(modelDir),
      config,
      configJson: modelConfigToJson(config),
      instance: { name: spec.name, kind: spec.kind, device: spec.device },
      ...(this.#options.inspect ? { inspect: true } : {}),
    };
    const p = this.#params;
    const started = spawnWorkerInstance<PythonLikeInit>({
      entry: ENTRY_URL,
      init,
      ...instanceWorkerOptions(this.#spec, spec),
      ...workerBounds(p),
      ...(this.#options.restart ? { restart: this.#options.restart } : {}),
      infer: (request) => this.#bls(request),
      ...(this.#spec.metrics ? { metrics: this.#spec.metrics } : {}),
      ...(this.#spec.inferStream ? { inferStream: this.#spec.inferStream } : {}),
      ...(this.#options.readiness ? { readiness: this.#options.readiness } : {}),
      ...isolationOptions(p, modelDir, this.#bundle),
    });
    const [instance, checked] = await Promise.allSettled([started, this.#options.checked]);
    if (checked.status === 'rejected') {
      if (instance.status === 'fulfilled') await instance.value.dispose();
      throw checked.reason;
    }
    if (instance.status === 'rejected') throw instance.reason;
    return instance.value;
  }

  async dispose(): Promise<void> {
    await removeTranspiled(this.#bundle.file);
  }
}
