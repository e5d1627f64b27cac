/**
 * The ONNX Runtime backend: `onnxBackend()` → a core Backend named `onnxruntime` serving
 * `onnxruntime_onnx`. Auto-complete and config/model validation run on the main thread from the
 * model's protobuf; each instance's session lives in its own worker (core's worker host), because
 * onnxruntime-node's `run()` blocks the thread it runs on: a worker thread by default (the fastest),
 * or a sandboxed child process (`tritium.isolation: process`, and always for a model uploaded
 * through the load API). A run stuck in native code cannot be stopped inside a thread (onnxruntime-node
 * 1.30 has no run-terminate hook: its RunOptions carry only a log level and a tag), so only a child
 * process can be killed when an execute overruns or an unload gives up waiting.
 */
import { resolve as resolvePath, dirname } from 'node:path';
import { InferError, type ModelConfig, type ModelInput, type ModelOutput } from '@tritium/core';
import {
  BACKEND_API_VERSION,
  configTensorPlan,
  instanceWorkerOptions,
  sequenceTensors,
  type AutoCompleteSpec,
  type Backend,
  type BackendModel,
  type InstanceSpec,
  type LoadSpec,
  type ModelInstance,
  type SequenceTensorSpec,
} from '@tritium/core/backend';
import { isolationParameters, spawnWorkerInstance, workerBounds, type IsolationParameters, type WorkerInstanceOptions } from '@tritium/core/worker';
import { autoCompleteConfig, autoCompleteSkipped, DEFAULT_MAX_BATCH_SIZE, skippedMessage } from './autocomplete.ts';
import { DEFAULT_MODEL_FILENAME, readModelIo, resolveModelPath } from './model-io.ts';
import { validateModelIo } from './validate-io.ts';
import { instanceProviders, modelSessionOptions } from './session-options.ts';
import type { OnnxInstanceInit, TensorPlan } from './plan.ts';

export interface OnnxBackendOptions {
  /** Triton's `--backend-config=onnxruntime,default-max-batch-size=N` (default 4). */
  readonly defaultMaxBatchSize?: number;
  /** KIND_GPU on a host without a usable GPU fails to load instead of falling back to CPU. */
  readonly strictGpu?: boolean;
  /** An execute running longer kills its worker (its requests fail, the instance restarts). Default: none. */
  readonly executeTimeoutMs?: number;
  /** Override of the cores the default intra-op thread count divides (default: os.availableParallelism()). */
  readonly cores?: number;
  /** Isolation when a config does not set `tritium.isolation` (default `thread`: the fastest; uploads always run as `process`). */
  readonly defaultIsolation?: 'thread' | 'process';
}

const ENTRY = new URL('./instance-entry.ts', import.meta.url);

/** `--backend-config=onnxruntime,default-max-batch-size=N`, or Triton's default (4). */
function configuredMaxBatchSize(backendConfig: Readonly<Record<string, string>> | undefined): number {
  const raw = backendConfig?.['default-max-batch-size'];
  if (raw === undefined) return DEFAULT_MAX_BATCH_SIZE;
  const value = Number(raw.trim());
  if (raw.trim() === '' || !Number.isInteger(value)) {
    throw new InferError('INVALID_ARG', `backend config 'onnxruntime': default-max-batch-size must be an integer, got '${raw}'`);
  }
  return value;
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'on', 'yes'].includes(value.trim().toLowerCase());
}

function plan(io: ModelInput | ModelOutput, model: string): TensorPlan {
  return { ...configTensorPlan(io, model), ...('allow_ragged_batch' in io && io.allow_ragged_batch ? { ragged: true } : {}) };
}

function sequencePlan(t: SequenceTensorSpec): TensorPlan {
  return { name: t.name, datatype: t.datatype, dims: [...t.dims] };
}

/**
 * Where an instance runs: a thread, or a child process that may load onnxruntime-node's addon and
 * read the model's folder (the model file and any external data beside it) and nothing else of the
 * server's files, under the sandbox's memory bound.
 */
function isolationOptions(p: IsolationParameters, modelDir: string, modelPath: string): Partial<WorkerInstanceOptions<unknown>> {
  if (p.isolation !== 'process') return { isolation: 'thread' };
  return {
    isolation: 'process',
    execArgv: ['--allow-addons'],
    processPermissions: { allowRead: [...new Set([resolvePath(modelDir), dirname(resolvePath(modelPath))])] },
    // onnxruntime-node 1.30 starts a telemetry client that writes under $HOME and uploads over HTTPS;
    // the sandbox allows neither, and ORT then warns on every start.
    env: { ORT_DISABLE_TELEMETRY: '1' },
    sandbox: { ...(p.memoryMb ? { memoryLimitMb: p.memoryMb } : {}) },
  };
}

class OnnxModel implements BackendModel {
  constructor(
    private readonly spec: LoadSpec,
    private readonly modelPath: string,
    private readonly params: IsolationParameters,
    private readonly options: OnnxBackendOptions,
  ) {}

  async createInstance(instance: InstanceSpec): Promise<ModelInstance> {
    const { config, log } = this.spec;
    const strictGpu = this.options.strictGpu ?? truthy(this.spec.backendConfig?.['strict-gpu']);
    const shared = modelSessionOptions(config, this.options.cores);
    const providers = instanceProviders(config, instance, log, strictGpu);
    const sequence = sequenceTensors(config);
    const init: OnnxInstanceInit = {
      modelPath: this.modelPath,
      modelName: config.name,
      version: this.spec.version,
      maxBatchSize: config.max_batch_size,
      // A sequence model also gets the sequence batcher's control and state inputs, and gives its state outputs.
      inputs: [...config.input.map((i) => plan(i, config.name)), ...sequence.inputs.map(sequencePlan)],
      outputs: [...config.output.map((o) => plan(o, config.name)), ...sequence.outputs.map(sequencePlan)],
      batchInputs: (config.batch_input ?? []).map((b) => ({
        kind: b.kind,
        target: b.target_name[0]!,
        datatype: b.data_type === 'TYPE_FP32' ? 'FP32' : 'INT32',
        source: b.source_input[0] ?? '',
      })),
      session: { ...shared.session, executionProviders: providers.executionProviders },
      run: shared.run,
    };
    const p = this.params;
    log.verbose(
      1,
      `model '${config.name}' instance '${instance.name}': onnxruntime on ${providers.description}, ${init.session.intraOpNumThreads} intra-op thread(s), ${p.isolation} isolation`,
    );
    // The backend's own timeout (an embedder's option) and the config's: the shorter wins.
    const timeouts = [this.options.executeTimeoutMs, p.executeTimeoutMs].filter((t): t is number => t !== undefined && t > 0);
    return spawnWorkerInstance({
      entry: ENTRY,
      init,
      ...instanceWorkerOptions(this.spec, instance),
      ...workerBounds(p),
      ...(timeouts.length > 0 ? { executeTimeoutMs: Math.min(...timeouts) } : {}),
      ...isolationOptions(p, this.spec.modelDir, this.modelPath),
    });
  }

  async dispose(): Promise<void> {}
}

/** Creates the ONNX Runtime backend. */
export function onnxBackend(options: OnnxBackendOptions = {}): Backend {
  return {
    name: 'onnxruntime',
    apiVersion: BACKEND_API_VERSION,
    // Each instance owns its session in its own worker: they can start side by side.
    parallelInstanceLoading: true,
    platforms: ['onnxruntime_onnx'],
    defaultModelFilename: DEFAULT_MODEL_FILENAME,

    async autoComplete(spec: AutoCompleteSpec): Promise<ModelConfig> {
      const { config } = spec;
      // Triton skips without opening the model when the config lists inputs and outputs.
      if (autoCompleteSkipped(config)) {
        spec.log.info(skippedMessage(config.name));
        return config;
      }
      // No version folder: nothing to read; core reports the missing version.
      if (!spec.versionDir) return config;
      const path = await resolveModelPath(config, spec.versionDir);
      const io = await readModelIo(path, config.name);
      return autoCompleteConfig(config, io, spec.log, options.defaultMaxBatchSize ?? configuredMaxBatchSize(spec.backendConfig));
    },

    async loadModel(spec: LoadSpec): Promise<BackendModel> {
      const params = isolationParameters(spec.config, {
        ...(options.defaultIsolation ? { isolation: options.defaultIsolation } : {}),
        forceProcess: spec.uploadedFiles === true,
        ...(spec.limits ? { limits: spec.limits } : {}),
      });
      if (params.isolationForced) {
        spec.log.warn(
          `model '${spec.config.name}': its files were uploaded through the load API, so its sessions run with process isolation ` +
            `(its config asked for 'thread')`,
        );
      }
      const path = await resolveModelPath(spec.config, spec.versionDir);
      const io = await readModelIo(path, spec.config.name);
      validateModelIo(spec.config, io);
      if ((spec.config.batch_output ?? []).length > 0) {
        throw new InferError(
          'UNSUPPORTED',
          `model '${spec.config.name}': batch_output (${spec.config.batch_output[0]!.kind}) is not supported by Tritium's onnxruntime backend`,
        );
      }
      return new OnnxModel(spec, path, params, options);
    },
  };
}
