/**
 * What `tritium serve` runs with: every option its flags set (flags.ts parses them), and the
 * defaults a server built without flags starts from, tritonserver's where Triton has the option.
 */
import { DEFAULT_STREAM_LIMITS } from '../protocol/stream-queue.ts';
import { DEFAULT_HTTP_CONNECTION_LIMITS, DEFAULT_LIMITS, DEFAULT_MAX_HEALTH_WATCHES, type HttpConnectionLimits } from '../protocol/limits.ts';
import type { Restrictions } from '../protocol/restricted.ts';
import type { TlsOptions } from '../protocol/tls.ts';
import type { GrpcConnectionOptions } from '../grpc/grpc-server.ts';
import { defaultMaxBufferedRequestBytes } from '../protocol/request-budget.ts';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS } from '../protocol/connection-plan.ts';
import { parseTraceFlags, type TraceConfig } from '../tracing/trace-config.ts';
import { type RateLimitResourceFlag } from '@tritium/core/server';
import { DEFAULT_MODEL_LOG_BYTES_PER_SEC } from '@tritium/core/worker';
import { defaultModelLimitOptions, type ModelLimitOptions } from './model-limit-flags.ts';

export type ModelControlMode = 'none' | 'poll' | 'explicit';

export interface ServeOptions extends ModelLimitOptions {
  modelRepositories: string[];
  modelControlMode: ModelControlMode;
  loadModels: string[];
  repositoryPollSecs: number;
  /** `--repository-cache-dir`: where object-store repositories are copied (default: a temporary folder). */
  repositoryCacheDir?: string;
  strictModelConfig: boolean;
  disableAutoCompleteConfig: boolean;
  exitOnError: boolean;
  strictReadiness: boolean;
  /** `--model-namespacing` (default false): repositories may hold models of the same name (Triton's). */
  modelNamespacing: boolean;
  exitTimeoutSecs: number;
  modelConfigName?: string;
  allowHttp: boolean;
  allowGrpc: boolean;
  allowMetrics: boolean;
  httpPort: number;
  grpcPort: number;
  metricsPort: number;
  httpAddress: string;
  grpcAddress: string;
  metricsAddress: string;
  /** `--openai-port` (Triton's OpenAI frontend's flag): the OpenAI routes on a listener of their own; undefined = none (they stay on the HTTP port). */
  openaiPort?: number;
  openaiAddress: string;
  /** `--openai-api-key` (repeatable) and `--openai-api-key-file`: keys the OpenAI routes require; none = no key needed. */
  openaiApiKeys: string[];
  /** `--openai-api-key-file` paths as given (read by `parseServeFlags`). */
  openaiApiKeyFiles: string[];
  /** `--health-port` (beyond Triton): /v2/health/{live,ready} on a listener served by its own thread; undefined = none. */
  healthPort?: number;
  healthAddress: string;
  httpMaxInputSize: number;
  httpMaxJsonSize: number;
  /** `--grpc-max-input-size` (beyond Triton): the most bytes one gRPC request message may have, on the wire or inflated. */
  grpcMaxInputSize: number;
  /** `--max-buffered-request-size` (beyond Triton): request bytes held at once, all requests of both transports together. */
  maxBufferedRequestSize: number;
  /** `--stream-max-queued-size` (beyond Triton): response bytes queued for one streaming client that has not read them. */
  streamMaxQueuedSize: number;
  /** `--stream-stall-timeout-secs` (beyond Triton): how long a stream may stay at that bound before it ends. */
  streamStallTimeoutSecs: number;
  maxTensorElements: number;
  httpMaxHeaderCount: number;
  allowClientShm: boolean;
  allowModelFileLoad: boolean;
  /** `--model-log-rate` (beyond Triton): bytes per second of one instance's output that reach the log. */
  modelLogRate: number;
  /** `--strict-sandbox` (beyond Triton): refuse a process-isolated model whose sandbox lacks a guarantee on this host. */
  strictSandbox: boolean;
  /** `--model-type-check` (beyond Triton): what a type error in a model.ts does to its load. */
  modelTypeCheck: 'error' | 'warn' | 'off';
  /** `--model-install-dependencies` (beyond Triton): `npm ci` a model folder's own package.json at load when its node_modules is missing. */
  modelInstallDependencies: boolean;
  logVerbose: number;
  logInfo: boolean;
  logWarning: boolean;
  logError: boolean;
  logFormat: 'default' | 'ISO8601';
  logFile?: string;
  /** `--backend-config=<backend>,<key>=<value>` collected per backend. */
  backendConfig: Record<string, Record<string, string>>;
  /** `--http-restricted-api`: categories gated behind a header (Triton's). */
  httpRestrictedApi: Restrictions;
  /** `--grpc-restricted-protocol`: categories gated behind `triton-grpc-protocol-<key>` metadata. */
  grpcRestrictedProtocol: Restrictions;
  /** `--grpc-use-ssl` / `--grpc-use-ssl-mutual` and PEM files (Triton's flags). */
  grpcSsl: TlsOptions;
  /** `--http-use-ssl` / `--http-use-ssl-mutual` and PEM files: HTTPS (beyond Triton). */
  httpSsl: TlsOptions;
  /** `--http-headers-timeout-secs`, `--http-request-timeout-secs`, `--http-max-connections`. */
  httpConnections: HttpConnectionLimits;
  /** `--grpc-max-connections` (beyond Triton): open gRPC connections at most (lowered to fit the descriptor limit, connection-plan.ts). */
  grpcMaxConnections: number;
  /** `--metrics-max-connections` and `--health-max-connections` (beyond Triton): open connections to the metrics and health listeners at most. */
  metricsMaxConnections: number;
  healthMaxConnections: number;
  /** `--grpc-reflection` (beyond Triton; default true): gRPC server reflection v1 and v1alpha. */
  grpcReflection: boolean;
  /** `--grpc-health-max-watches` (beyond Triton): `grpc.health.v1.Health/Watch` streams open at once. */
  grpcHealthMaxWatches: number;
  /** `--grpc-first-request-timeout-secs` (beyond Triton): a gRPC connection that starts no call this long after it opened is closed. */
  grpcFirstRequestTimeoutSecs: number;
  /** The trace flags as given (`--trace-config`, deprecated `--trace-*`). */
  traceFlags: { config: string[]; file?: string; level: string[]; rate?: string; count?: string; logFrequency?: string };
  /** What they configure (`parseServeFlags` fills it; Triton's defaults otherwise). */
  trace: TraceConfig;
  /** `--metrics-config <setting>=<value>` (Triton's): which latency metrics are kept. */
  metricsConfig: MetricsConfig;
  /** `--cache-config <cache>,<setting>=<value>` collected per cache. */
  cacheConfig: Record<string, Record<string, string>>;
  /** Deprecated `--response-cache-byte-size <bytes>` as given. */
  responseCacheByteSize?: string;
  /** The `local` response cache's size that these configure (`parseServeFlags` fills it); undefined = none. */
  responseCacheBytes?: number;
  /** The `redis` cache's settings that these configure (`parseServeFlags` fills it); undefined = none. */
  redisCache?: Readonly<Record<string, string>>;
  /** `--rate-limit off|execution_count` (default off, as Triton). */
  rateLimit: 'off' | 'execution_count';
  /** `--rate-limit-resource <name>:<count>[:<device>]` (repeatable). */
  rateLimitResources: RateLimitResourceFlag[];
  /** `--http-header-forward-pattern` / `--grpc-header-forward-pattern`: headers (metadata) forwarded as request parameters. */
  headerForward: { http?: RegExp; grpc?: RegExp };
  /** `--model-load-retry-count` (Triton's, default 0): a failed version load is tried again this many times. */
  modelLoadRetryCount: number;
  /** `--id`: the server's name in server metadata (Triton's default `triton`). */
  serverId: string;
  /** `--grpc-keepalive-time`, `--grpc-keepalive-timeout`, `--grpc-max-connection-age[-grace]` (ms; Triton's defaults when unset). */
  grpcConnection: { -readonly [K in keyof GrpcConnectionOptions]: GrpcConnectionOptions[K] };
  /** tritonserver flags given that change nothing here (triton-flags-without-effect.ts): warned about at start. */
  flagsWithoutEffect: { flag: string; why: string }[];
}


export interface MetricsConfig {
  /** `counter_latencies` (default true): the nv_inference_*_duration_us counters. */
  counterLatencies: boolean;
  /** `histogram_latencies` (default false): nv_inference_first_response_histogram_ms. */
  histogramLatencies: boolean;
  /** `summary_latencies` (default false): nv_inference_*_summary_us. */
  summaryLatencies: boolean;
  /** `summary_quantiles` ("0.5:0.05,0.9:0.01,..."; the error part is accepted and not needed: quantiles are exact over the window). */
  summaryQuantiles: number[];
  /** `summary_max_age` seconds (prometheus-cpp's 60). */
  summaryMaxAgeSecs: number;
}


export function defaultServeOptions(): ServeOptions {
  return {
    modelRepositories: [],
    modelControlMode: 'none',
    loadModels: [],
    repositoryPollSecs: 15,
    strictModelConfig: false,
    disableAutoCompleteConfig: false,
    exitOnError: true,
    strictReadiness: true,
    modelNamespacing: false,
    exitTimeoutSecs: 30,
    allowHttp: true,
    allowGrpc: true,
    allowMetrics: true,
    httpPort: 8000,
    grpcPort: 8001,
    metricsPort: 8002,
    httpAddress: '0.0.0.0',
    grpcAddress: '0.0.0.0',
    metricsAddress: '0.0.0.0',
    healthAddress: '0.0.0.0',
    openaiAddress: '0.0.0.0',
    openaiApiKeys: [],
    openaiApiKeyFiles: [],
    httpMaxInputSize: DEFAULT_LIMITS.maxInputBytes,
    httpMaxJsonSize: DEFAULT_LIMITS.maxJsonBytes,
    grpcMaxInputSize: DEFAULT_LIMITS.maxInputBytes,
    maxBufferedRequestSize: defaultMaxBufferedRequestBytes(),
    streamMaxQueuedSize: DEFAULT_STREAM_LIMITS.maxQueuedBytes,
    streamStallTimeoutSecs: DEFAULT_STREAM_LIMITS.stallTimeoutMs / 1000,
    maxTensorElements: DEFAULT_LIMITS.maxTensorElements,
    httpMaxHeaderCount: DEFAULT_LIMITS.maxHeaderCount,
    allowClientShm: false,
    allowModelFileLoad: false,
    modelLogRate: DEFAULT_MODEL_LOG_BYTES_PER_SEC,
    strictSandbox: false,
    modelTypeCheck: 'error',
    modelInstallDependencies: false,
    logVerbose: 0,
    logInfo: true,
    logWarning: true,
    logError: true,
    logFormat: 'default',
    backendConfig: {},
    httpRestrictedApi: {},
    grpcRestrictedProtocol: {},
    grpcSsl: { useSsl: false, useMutualAuth: false },
    httpSsl: { useSsl: false, useMutualAuth: false },
    httpConnections: { ...DEFAULT_HTTP_CONNECTION_LIMITS },
    grpcMaxConnections: DEFAULT_MAX_CONNECTIONS,
    metricsMaxConnections: DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS,
    healthMaxConnections: DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS,
    grpcReflection: true,
    grpcHealthMaxWatches: DEFAULT_MAX_HEALTH_WATCHES,
    grpcFirstRequestTimeoutSecs: 10,
    traceFlags: { config: [], level: [] },
    metricsConfig: { counterLatencies: true, histogramLatencies: false, summaryLatencies: false, summaryQuantiles: [0.5, 0.9, 0.95, 0.99, 0.999], summaryMaxAgeSecs: 60 },
    trace: parseTraceFlags({ config: [] }, {}),
    cacheConfig: {},
    rateLimit: 'off',
    rateLimitResources: [],
    headerForward: {},
    modelLoadRetryCount: 0,
    serverId: 'triton',
    grpcConnection: {},
    flagsWithoutEffect: [],
    ...defaultModelLimitOptions(),
  };
}
