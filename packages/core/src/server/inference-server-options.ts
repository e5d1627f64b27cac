/** `InferenceServer`'s options: what an embedder (or `tritium serve`'s flags) configures. */
import type { Backend } from '../backend/spi.ts';
import type { ResponseCacheStore } from '../cache/response-cache-store.ts';
import type { InferError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { LatencyMetricsOptions } from '../metrics/latency-metrics.ts';
import type { ConfigCodec } from '../repository/config-codec.ts';
import type { RepositorySource } from '../repository/source/repository-source.ts';
import type { RateLimitResourceFlag } from '../scheduler/rate-limiter.ts';
import type { Clock } from '../scheduler/scheduler.ts';
import type { WorkerPolicy } from '../worker/types.ts';
import type { ModelLimits } from './model-limits.ts';

export type ModelControlMode = 'none' | 'poll' | 'explicit';

export interface InferenceServerOptions {
  /**
   * `--model-repository` (repeatable): local folders, or repository sources for object stores
   * (the server binds `s3://`, `as://`, `gs://` to them).
   */
  readonly repositories: readonly (string | RepositorySource)[];
  /** Folder for the local copies of object-store repositories (default: a temporary folder removed at stop). */
  readonly repositoryCacheDir?: string;
  readonly backends: readonly Backend[];
  /** `--model-control-mode` (default `none`). */
  readonly modelControlMode?: ModelControlMode;
  /** `--load-model` (explicit mode); `'*'` alone loads every model. */
  readonly startupModels?: readonly string[];
  /** `--repository-poll-secs` (poll mode, default 15; 0 = no timer, call `pollNow()`). */
  readonly repositoryPollSecs?: number;
  /** `--disable-auto-complete-config`. */
  readonly disableAutoCompleteConfig?: boolean;
  /** Deprecated `--strict-model-config`: true also disables auto-complete. */
  readonly strictModelConfig?: boolean;
  /** `--strict-readiness` (default true): ready only while every model is ready. */
  readonly strictReadiness?: boolean;
  /** `--exit-on-error` (default true): `start()` rejects if any model fails to load. */
  readonly exitOnError?: boolean;
  /** `--model-config-name`. */
  readonly modelConfigName?: string;
  /** `--model-load-retry-count` (default 0). */
  readonly modelLoadRetryCount?: number;
  /** Accept `file:` contents in the load API (default false). */
  readonly allowModelFileOverride?: boolean;
  /** `--backend-config=<backend>,<k>=<v>`. */
  readonly backendConfig?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** `--model-log-rate`, `--strict-sandbox`: rules for every worker a backend starts (see WorkerPolicy). */
  readonly workerPolicy?: WorkerPolicy;
  readonly log?: Logger;
  readonly clock?: Clock;
  /** The config reader (defaults to core's parser); for embedders and tests. */
  readonly configCodec?: ConfigCodec;
  /**
   * Check only (`tritium config`): `start()` reads, completes and validates the models, checks
   * ensembles against their composing models and runs each backend's `loadModel` exactly as
   * serving would, but starts no instance; every request is refused.
   */
  readonly checkOnly?: boolean;
  /**
   * Called with each model failure as it happens (the error keeps its code and `fieldPath`), with
   * the version when a version failed to load (none when the model's config failed).
   */
  readonly onModelFailure?: (model: string, error: InferError, version?: number) => void;
  /** `--metrics-config`: latency summaries and the first-response histogram (off by default, as Triton). */
  readonly latencyMetrics?: LatencyMetricsOptions;
  /**
   * `--cache-config local,size=<bytes>`: the response cache's size, shared by every model whose
   * config enables `response_cache` (none by default, as Triton: those models then run every request).
   */
  readonly responseCacheBytes?: number;
  /**
   * A response cache store of the embedder's (`--cache-config redis,...` binds `@tritium/cache-redis`),
   * instead of the `local` one `responseCacheBytes` sizes. Its owner closes it after `stop()`.
   */
  readonly responseCache?: ResponseCacheStore;
  /**
   * `--rate-limit execution_count` with its `--rate-limit-resource` flags: instances run only while
   * they hold their group's `rate_limiter` resources. Undefined = `--rate-limit off` (Triton's default:
   * every rate_limiter block is ignored).
   */
  readonly rateLimit?: { readonly resources?: readonly RateLimitResourceFlag[] };
  /**
   * How long an unloading version (an unload, a reload's old version) may drain its requests before
   * what still runs is stopped (a process-isolated worker is killed). Default 30 000 ms.
   */
  readonly unloadTimeoutMs?: number;
  /**
   * Ceilings on what a config sent through the load API (its files uploaded, or a config override)
   * may ask for, or every model's with `scope: 'all'` (see model-limits.ts). Default: none.
   */
  readonly modelLimits?: ModelLimits;
  /**
   * `--model-namespacing`: each repository is a namespace, so several may hold models of the same
   * name; ensembles resolve their steps in their own repository first; a client's name held in
   * several repositories is refused with Triton's ambiguity error. Default false.
   */
  readonly modelNamespacing?: boolean;
  /** Most model instances starting at once in the server (Triton's --model-load-thread-count; default 4). */
  readonly instanceStarts?: number;
}
