/**
 * The TensorRT backend: `tensorrtBackend()` → a core Backend named `tensorrt` serving
 * `tensorrt_plan` (`model.plan`). Auto-complete and config/engine validation run on the main
 * thread from the engine's signature (read through the shim); each instance owns its engine,
 * execution context, CUDA stream and buffers inside its own worker — by default a child process, so
 * a fault in native code (a CUDA or TensorRT crash) fails only that instance's requests and the
 * instance restarts, while the server and its other models keep serving. Where the shim, TensorRT
 * or CUDA is missing, the backend still registers and a load of a TensorRT model fails with a
 * message naming the missing library and how to provide it.
 */
import { dirname } from 'node:path';
import { type ModelConfig, type ModelInput, type ModelOutput } from '@tritium/core';
import {
  BACKEND_API_VERSION,
  configTensorPlan,
  instanceWorkerOptions,
  type AutoCompleteSpec,
  type Backend,
  type BackendModel,
  type InstanceSpec,
  type LoadSpec,
  type ModelInstance,
} from '@tritium/core/backend';
import { spawnWorkerInstance, type WorkerRestartPolicy } from '@tritium/core/worker';
import { resolveShimPath, type EngineInfo } from './binding.ts';
import { autoCompleteConfig } from './autocomplete.ts';
import { DEFAULT_MODEL_FILENAME, profileIndices, readEngineInfo, resolveEnginePath } from './engine-io.ts';
import { validateEngineIo } from './validate-io.ts';
import type { TensorPlan, TrtInstanceInit } from './plan.ts';

export interface TensorrtBackendOptions {
  /** The shim library (default: `$TRITIUM_TRT_SHIM`, else `native/build/libtritium_trt.so`). */
  readonly shimPath?: string;
  /**
   * Where each instance runs: `'process'` (default) contains native crashes to that instance;
   * `'thread'` starts faster but a native crash (abort, segfault) takes the whole server down.
   */
  readonly isolation?: 'process' | 'thread';
  /** An execute running longer kills its worker (its requests fail, the instance restarts). Default: none. */
  readonly executeTimeoutMs?: number;
  /** Crash-restart policy of the instances' workers (core's defaults otherwise). */
  readonly restart?: WorkerRestartPolicy;
}

const ENTRY = new URL('./instance-entry.ts', import.meta.url);

function plan(io: ModelInput | ModelOutput, model: string): TensorPlan {
  return { ...configTensorPlan(io, model, ['BYTES']), ...(io.is_shape_tensor ? { isShapeTensor: true } : {}) };
}

/** The profile an instance group's contexts use: its first listed profile, else 0. */
function groupProfile(config: ModelConfig, groupName: string): number {
  const group = config.instance_group.find((g) => g.name === groupName);
  const first = group?.profile?.[0];
  return first === undefined ? 0 : Number(first);
}

class TrtModel implements BackendModel {
  constructor(
    private readonly spec: LoadSpec,
    private readonly enginePath: string,
    private readonly info: EngineInfo,
    private readonly shimPath: string,
    private readonly options: TensorrtBackendOptions,
  ) {}

  async createInstance(instance: InstanceSpec): Promise<ModelInstance> {
    const { config, log } = this.spec;
    const profile = groupProfile(config, instance.groupName);
    const inputs = config.input.map((i) => {
      const p = plan(i, config.name);
      const shape = this.info.tensors.find((t) => t.name === i.name)?.profiles[profile];
      return shape ? { ...p, min: shape.min, max: shape.max } : p;
    });
    const init: TrtInstanceInit = {
      shimPath: this.shimPath,
      enginePath: this.enginePath,
      modelName: config.name,
      version: this.spec.version,
      maxBatchSize: config.max_batch_size,
      profile,
      device: instance.kind === 'GPU' ? instance.device : 0,
      inputs,
      outputs: config.output.map((o) => plan(o, config.name)),
    };
    const isolation = this.options.isolation ?? 'process';
    // A model the server's ceilings bound (uploaded) gets their execute timeout when the backend sets none.
    const executeTimeoutMs = this.options.executeTimeoutMs ?? this.spec.limits?.executeTimeoutMs;
    log.verbose(1, `model '${config.name}' instance '${instance.name}': TensorRT on device ${init.device}, profile ${profile}, ${isolation} isolation`);
    return spawnWorkerInstance({
      entry: ENTRY,
      init,
      ...instanceWorkerOptions(this.spec, instance),
      isolation,
      ...(isolation === 'process'
        ? { execArgv: ['--allow-addons'], processPermissions: { allowRead: [dirname(this.enginePath), dirname(this.shimPath)] } }
        : {}),
      ...(executeTimeoutMs ? { executeTimeoutMs } : {}),
      ...(this.options.restart ? { restart: this.options.restart } : {}),
    });
  }

  async dispose(): Promise<void> {}
}

/** Creates the TensorRT backend. */
export function tensorrtBackend(options: TensorrtBackendOptions = {}): Backend {
  // Resolved here, on the main thread: bundled workers cannot locate the package from import.meta.url.
  const shimPath = () => resolveShimPath(options.shimPath);
  return {
    name: 'tensorrt',
    apiVersion: BACKEND_API_VERSION,
    platforms: ['tensorrt_plan'],
    defaultModelFilename: DEFAULT_MODEL_FILENAME,

    async autoComplete(spec: AutoCompleteSpec): Promise<ModelConfig> {
      // No version folder: nothing to read; core reports the missing version.
      if (!spec.versionDir) return spec.config;
      const path = await resolveEnginePath(spec.config, spec.versionDir);
      const info = await readEngineInfo(shimPath(), path, spec.config.name);
      return autoCompleteConfig(spec.config, info, spec.log);
    },

    async loadModel(spec: LoadSpec): Promise<BackendModel> {
      const path = await resolveEnginePath(spec.config, spec.versionDir);
      const shim = shimPath();
      const info = await readEngineInfo(shim, path, spec.config.name);
      for (const profile of profileIndices(spec.config, info.numProfiles)) validateEngineIo(spec.config, info, profile);
      return new TrtModel(spec, path, info, shim, options);
    },
  };
}
