/**
 * What `InferenceServer` offers the transports (HTTP, gRPC, metrics). Transports depend on this shape
 * only; they never reach into schedulers or backends. Errors are InferError with Triton's messages
 * (e.g. NOT_FOUND "Request for unknown model: 'x' is not found").
 */
import type { DataType } from '../tensor/data-type.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import type { LatencySnapshot, TokenStats } from './model-stats.ts';
import type { CustomFamilySnapshot } from '../metrics/custom-metrics.ts';

export type ModelState = 'UNKNOWN' | 'LOADING' | 'READY' | 'UNLOADING' | 'UNAVAILABLE';

/**
 * One row of the repository index. A model folder never loaded is `{ version: '', state: 'UNKNOWN',
 * reason: '' }`: Triton lists such a model by name only, so transports print just `name` for it.
 */
export interface ModelIndexEntry {
  readonly name: string;
  /** Empty string when no version is known (e.g. a model that failed before versions were read). */
  readonly version: string;
  readonly state: ModelState;
  readonly reason: string;
}

export interface TensorMetadata {
  readonly name: string;
  readonly datatype: DataType;
  readonly shape: readonly number[];
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: readonly string[];
}

export interface StatisticDuration {
  count: number;
  ns: number;
}

/** Triton's ModelStatistics (field names as Triton's JSON). */
export interface ModelStatistics {
  name: string;
  version: string;
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: {
    success: StatisticDuration;
    fail: StatisticDuration;
    queue: StatisticDuration;
    compute_input: StatisticDuration;
    compute_infer: StatisticDuration;
    compute_output: StatisticDuration;
    cache_hit: StatisticDuration;
    cache_miss: StatisticDuration;
  };
  batch_stats: {
    batch_size: number;
    compute_input: StatisticDuration;
    compute_infer: StatisticDuration;
    compute_output: StatisticDuration;
  }[];
  memory_usage: { type: string; id: number; byte_size: number }[];
  response_stats: Record<
    string,
    {
      compute_infer: StatisticDuration;
      compute_output: StatisticDuration;
      success: StatisticDuration;
      fail: StatisticDuration;
      empty_response: StatisticDuration;
      cancel: StatisticDuration;
    }
  >;
  /**
   * Tritium's own fields (HTTP's JSON only; gRPC's ModelStatistics has no field for them), present
   * when the version padded rows: tokens of its executions (padding-aware or length-aware batching).
   */
  tritium?: {
    tokens: { executions: number; real: number; padded: number; padding_efficiency: number };
  };
}

/** Per-model counters behind Triton's Prometheus metrics (nv_inference_*). */
export interface ModelMetricsSnapshot {
  readonly model: string;
  readonly version: string;
  /** The model's repository with `--model-namespacing` (Triton's `namespace` label); absent without. */
  readonly namespace?: string;
  readonly metricTags: Readonly<Record<string, string>>;
  readonly requestSuccess: number;
  readonly requestFailure: Readonly<Record<'REJECTED' | 'CANCELED' | 'BACKEND' | 'OTHER', number>>;
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly pendingRequests: number;
  readonly requestDurationUs: number;
  readonly queueDurationUs: number;
  readonly computeInputDurationUs: number;
  readonly computeInferDurationUs: number;
  readonly computeOutputDurationUs: number;
  readonly loadDurationSecs: number;
  /** Requests re-run alone after their batch crashed its instance (poison isolation). */
  readonly crashRetries: number;
  /** Requests that crashed their instance running alone and failed alone as its cause. */
  readonly poisonRequests: number;
  /** Tokens of padded or length-grouped executions, when the version had any. */
  readonly tokens?: TokenStats;
  /** `--metrics-config` summaries / first-response histogram, when enabled. */
  readonly latency?: LatencySnapshot;
  /** Response cache counters (Triton's nv_cache_*_per_model), for versions that answer from the cache. */
  readonly cache?: { readonly hits: number; readonly hitDurationUs: number; readonly misses: number; readonly missDurationUs: number };
  readonly instances: readonly {
    readonly name: string;
    readonly healthy: boolean;
    readonly restarts: number;
    /** Executes that ran past the instance's warn threshold (`tritium.execute_warn_ms`). */
    readonly executeOverruns: number;
    /** Lines of the instance's output dropped over `--model-log-rate`. */
    readonly logLinesDropped: number;
  }[];
}

export interface LoadOptions {
  /** JSON ModelConfig that replaces the repository's config.pbtxt (Triton's `config` load parameter). */
  readonly configJson?: string;
  /** `file:<version>/<name>` → contents (only when the server allows model files through the API). */
  readonly files?: Readonly<Record<string, Uint8Array>>;
}

/**
 * What transports call. `version` arguments are the client's text as sent ('' or undefined = the
 * version the policy serves); implementations read them with `parseModelVersion`, the one grammar.
 */
export interface InferenceServerApi {
  isLive(): boolean;
  isReady(): boolean;
  serverMetadata(): ServerMetadata;
  modelReady(name: string, version?: string): boolean;
  modelMetadata(name: string, version?: string): ModelMetadata;
  modelConfig(name: string, version?: string): ModelConfig;
  /** True when the model (the version a request would reach) is decoupled. */
  isDecoupled(name: string, version?: string): boolean;
  infer(request: InferRequest): Promise<InferResponse>;
  /** Streaming/decoupled inference: 0..n responses then complete. */
  inferStream(request: InferRequest, sink: ResponseSink): void;
  statistics(name?: string, version?: string): ModelStatistics[];
  metrics(): ModelMetricsSnapshot[];
  /** Custom metric families published by models (optional for embedders' implementations). */
  customMetrics?(): CustomFamilySnapshot[];
  repositoryIndex(options?: { readyOnly?: boolean; repository?: string }): Promise<ModelIndexEntry[]>;
  loadModel(name: string, options?: LoadOptions & { repository?: string }): Promise<void>;
  unloadModel(name: string, options?: { unloadDependents?: boolean; repository?: string }): Promise<void>;
  /**
   * Readiness turns false, new requests are refused (UNAVAILABLE), in-flight ones finish, models
   * unload. Resolves false when `timeoutMs` expired and what still ran was torn down (the server
   * then exits 1, as Triton's `Exit timeout expired. Exiting immediately.`); true or nothing otherwise.
   */
  stop(options?: { timeoutMs?: number }): Promise<boolean | void>;
}
