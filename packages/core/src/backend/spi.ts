/**
 * The backend SPI: what a backend package implements to serve a kind of model (our tritonbackend.h).
 * Backends see core types only, never transports. Ownership: core creates one BackendModel per
 * loaded version and `instance_group` count × kind instances from it; it disposes instances before
 * their model. Concurrency: core never calls `execute` on one instance while a previous call on it
 * is still pending.
 */
import type { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { CallFrame, InferRequest, InferResponse, ResponseSink } from '../types.ts';
import type { Logger } from '../logger.ts';
import type { MetricOp } from '../metrics/custom-metrics.ts';
import type { WorkerPolicy } from '../worker/types.ts';
import type { ModelLimits } from '../server/model-limits.ts';

export const BACKEND_API_VERSION = 1;

export interface AutoCompleteSpec {
  /** The config as parsed (may lack inputs, outputs, max_batch_size). */
  readonly config: ModelConfig;
  /** Folder of the model (holds config.pbtxt and version folders). */
  readonly modelDir: string;
  /** The version folder auto-complete reads the model file from (Triton uses the first/highest). */
  readonly versionDir: string | undefined;
  readonly log: Logger;
  /** Server-wide settings for this backend (`--backend-config=onnxruntime,default-max-batch-size=8`). */
  readonly backendConfig?: Readonly<Record<string, string>>;
  /** See {@link LoadSpec.uploadedFiles}: any code auto-complete runs from the model is untrusted. */
  readonly uploadedFiles?: boolean;
  /** See {@link LoadSpec.workerPolicy}. */
  readonly workerPolicy?: WorkerPolicy;
}

export interface LoadSpec {
  readonly config: ModelConfig;
  readonly version: number;
  readonly modelDir: string;
  readonly versionDir: string;
  readonly log: Logger;
  /** Lets a model call other models through the server (BLS); undefined where not wired. */
  readonly infer?: (request: InferRequest) => Promise<InferResponse>;
  /** BLS to a decoupled model: streamed responses to `sink`, then `complete`; undefined where not wired. */
  readonly inferStream?: (request: InferRequest, sink: ResponseSink) => void;
  /** Server-wide settings a backend may honour (e.g. `--backend-config=onnxruntime,k=v`, strict GPU). */
  readonly backendConfig?: Readonly<Record<string, string>>;
  /**
   * Server-wide rules for the workers a backend starts (`--model-log-rate`, `--strict-sandbox`): a
   * backend passes them to `spawnWorkerInstance` as `policy`.
   */
  readonly workerPolicy?: WorkerPolicy;
  /**
   * The model's files came through the load API (`file:` overrides, `--allow-model-file-load`): a
   * backend that runs code from them must treat it as untrusted whatever the config says (the
   * python-like backend always runs such a model with process isolation).
   */
  readonly uploadedFiles?: boolean;
  /**
   * The server's ceilings, when they bound this model (uploaded, or every model with
   * `--model-limits=all`). Core has already refused a config over them; a backend caps its own
   * defaults by them (core's `isolationParameters` does: the memory default, the execute timeout).
   */
  readonly limits?: ModelLimits;
  /**
   * Where the model's custom metrics go (python-like's MetricFamily): each operation a worker sends,
   * validated and aggregated on the main thread; the value for a `value` operation. Throws
   * INVALID_ARG / UNSUPPORTED for a bad one.
   */
  readonly metrics?: CustomMetricsSink;
  /**
   * Aborted when the server stops while this load runs: the server no longer waits for it (it
   * disposes the model if `loadModel` resolves later). A backend that can stop early (a download,
   * a worker it started) should, and reject.
   */
  readonly signal?: AbortSignal;
  /**
   * The load only checks the model (`tritium config`): no instance will be created, so a backend
   * finishes here every check it would otherwise run beside its instances' start.
   */
  readonly checkOnly?: boolean;
}

export interface CustomMetricsSink {
  apply(op: MetricOp): number | undefined;
}

export interface InstanceSpec {
  /** Triton's instance name, e.g. `tokenizer_0_2` (group name, index within group). */
  readonly name: string;
  readonly kind: 'CPU' | 'GPU' | 'MODEL';
  readonly device: number;
  readonly groupName: string;
  /**
   * Called when this instance is down (e.g. a worker-hosted instance that crashed too many times in
   * a row and keeps restarting with a backoff), and again with each new cause while it stays down.
   * While every instance of a version is down, the server answers its requests UNAVAILABLE with
   * `reason` and shows it in the repository index. Optional.
   */
  readonly onUnavailable?: (reason: string) => void;
  /** Called when a down instance serves again. */
  readonly onAvailable?: () => void;
  /**
   * Aborted when the server stops while this instance is being created: the server no longer waits
   * (it disposes the instance if `createInstance` resolves later). A backend should stop what it
   * started (the worker host ends the worker) and reject.
   */
  readonly signal?: AbortSignal;
}

export interface Backend {
  /** Matched against ModelConfig.backend after platform→backend resolution (e.g. 'onnxruntime'). */
  readonly name: string;
  readonly apiVersion: typeof BACKEND_API_VERSION;
  /** Platforms this backend serves (e.g. ['onnxruntime_onnx']). */
  readonly platforms?: readonly string[];
  /** Default model file name (e.g. 'model.onnx'), used by core's autofill when no config names one. */
  readonly defaultModelFilename?: string;
  /** Fill inputs/outputs/max_batch_size from the model file (Triton auto-complete). */
  autoComplete?(spec: AutoCompleteSpec): Promise<ModelConfig>;
  /**
   * True when `createInstance` may run for several instances of one model at once (Triton's
   * TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading): core then starts a model's
   * instances concurrently instead of one after another. Default false.
   */
  readonly parallelInstanceLoading?: boolean;
  /** Validate parameters and load weights. Throwing (an InferError) keeps this version from loading. */
  loadModel(spec: LoadSpec): Promise<BackendModel>;
  dispose?(): Promise<void>;
}

export interface BackendModel {
  createInstance(spec: InstanceSpec): Promise<ModelInstance>;
  /** Called after all of this model's instances are disposed. */
  dispose(): Promise<void>;
}

/** Per-request outcome of one execute: a response, or an error that fails only that request. */
export type ExecuteResult = InferResponse | InferError;

/** Timings an instance may report for statistics (nanoseconds), measured for one execute. */
export interface ExecuteTimings {
  readonly computeInputNs?: number;
  readonly computeInferNs?: number;
  readonly computeOutputNs?: number;
}

/**
 * What one `execute` produced: exactly one result per request, in order, and that execute's own
 * timings (absent when the backend does not measure them; the scheduler then uses the wall time).
 * Timings travel with their results, never through instance state, so overlapping executes
 * (several in flight, decoupled responses, process isolation) cannot charge one batch's time to
 * another.
 */
export interface ExecuteOutput {
  readonly results: readonly ExecuteResult[];
  readonly timings?: ExecuteTimings;
}

/**
 * On whose behalf an execution runs. An instance whose code calls back into the server (BLS) gives
 * those calls `callers` (and a signal that aborts with the execution's), so cancellation reaches
 * them and a call that could only wait on its own callers' instances is refused at once.
 */
export interface ExecuteContext {
  /** The slots held while this execution runs: its requests' callers', then its own. */
  readonly callers: readonly CallFrame[];
  /**
   * The execution re-runs one request alone because its instance crashed running its batch (the
   * batcher's crash retry): a crash now is pinned on that request, so an instance that counts its
   * crashes (the worker host) does not take itself down for it.
   */
  readonly crashRetry?: boolean;
}

export interface ModelInstance {
  /**
   * Runs one batch. Resolves with exactly one result per request, in order. Rejecting (e.g. the
   * worker died) fails every request of the batch. `signal` aborts when every request of the batch
   * is cancelled or the instance is being torn down.
   */
  execute(batch: readonly InferRequest[], signal: AbortSignal, context?: ExecuteContext): Promise<ExecuteOutput>;
  /**
   * Decoupled models: responses go to each request's sink; resolves when the call returns, with
   * that call's timings if the backend measures them.
   */
  executeDecoupled?(
    batch: readonly InferRequest[],
    sinks: readonly ResponseSink[],
    signal: AbortSignal,
    context?: ExecuteContext,
  ): Promise<ExecuteTimings | void>;
  /** Health: false once the instance crashed and has not recovered. */
  readonly healthy?: boolean;
  dispose(): Promise<void>;
}
