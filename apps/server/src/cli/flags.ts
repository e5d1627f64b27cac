/**
 * `tritium serve` flags, named and defaulted as tritonserver's (docs/triton-compatibility.md §7). Both
 * `--flag=value` and `--flag value` work, and so does an unambiguous prefix of a flag's name, as with
 * tritonserver's getopt_long; booleans take Triton's values in any case (true/on/1, false/off/0, and
 * yes/no) and also a bare `--flag` (= true).
 */

import { DEFAULT_STREAM_LIMITS } from '../protocol/stream-queue.ts';
import { DEFAULT_HTTP_CONNECTION_LIMITS, DEFAULT_LIMITS, DEFAULT_MAX_HEALTH_WATCHES, type HttpConnectionLimits } from '../protocol/limits.ts';
import { addRestriction, type Restrictions } from '../protocol/restricted.ts';
import type { TlsOptions } from '../protocol/tls.ts';
import type { GrpcConnectionOptions } from '../grpc/grpc-server.ts';
import { headerForwardPattern } from '../protocol/header-forward.ts';
import { checkApiKey, readApiKeyFile } from '../openai/api-keys.ts';
import { defaultMaxBufferedRequestBytes } from '../protocol/request-budget.ts';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_SMALL_LISTENER_MAX_CONNECTIONS } from '../protocol/connection-plan.ts';
import { parseTraceFlags, TraceConfigError, type TraceConfig, type TraceFlags } from '../tracing/trace-config.ts';
import { type RateLimitResourceFlag } from '@tritium/core/server';
import { DEFAULT_MODEL_LOG_BYTES_PER_SEC } from '@tritium/core/worker';
import {
  CacheOrRateFlagError,
  parseCacheConfigOption,
  parseRateLimitMode,
  parseRateLimitResource,
  responseCacheOf,
} from './cache-and-rate-flags.ts';
import { checkFlagWithoutEffect, TRITON_FLAGS_WITHOUT_EFFECT } from './triton-flags-without-effect.ts';
import { checkModelLimitOptions, defaultModelLimitOptions, MODEL_LIMIT_USAGE, modelLimitFlags, type ModelLimitOptions } from './model-limit-flags.ts';

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

/** One `--metrics-config <setting>=<value>` (Triton's ParseMetricsConfigOption, with its message). */
function metricsConfigSetting(m: MetricsConfig, arg: string): void {
  const eq = arg.indexOf('=');
  const setting = eq < 0 ? '' : arg.slice(0, eq);
  const value = eq < 0 ? '' : arg.slice(eq + 1);
  if (eq < 0 || setting === '' || value === '' || setting.includes(',')) {
    throw new FlagError(`--metrics-config option format is <setting>=<value>. Got ${arg}`);
  }
  const flag = `metrics-config ${setting}`;
  switch (setting) {
    case 'counter_latencies':
      m.counterLatencies = bool(flag, value);
      return;
    case 'histogram_latencies':
      m.histogramLatencies = bool(flag, value);
      return;
    case 'summary_latencies':
      m.summaryLatencies = bool(flag, value);
      return;
    case 'summary_max_age':
      m.summaryMaxAgeSecs = int(flag, value, 1);
      return;
    case 'summary_quantiles': {
      const qs = value.split(',').map((pair) => {
        const q = Number(pair.split(':')[0]);
        if (!pair.includes(':') || !(q >= 0 && q <= 1)) {
          throw new FlagError(`invalid value for --metrics-config summary_quantiles: '${pair}' (expected <quantile>:<error> with a quantile from 0 to 1)`);
        }
        return q;
      });
      m.summaryQuantiles = qs;
      return;
    }
    default:
      throw new FlagError(
        `unknown --metrics-config setting '${setting}' (known: counter_latencies, histogram_latencies, summary_latencies, summary_quantiles, summary_max_age)`,
      );
  }
}

/** The trace configuration of parsed flags (FlagError naming the flag when a value is wrong). */
export function traceConfigOf(flags: TraceFlags): TraceConfig {
  try {
    return parseTraceFlags(flags);
  } catch (e) {
    if (e instanceof TraceConfigError) throw new FlagError(e.message);
    throw e;
  }
}

export class FlagError extends Error {}

/** Runs a parser of cache-and-rate-flags.ts, its errors as FlagError. */
function flagged<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof CacheOrRateFlagError) throw new FlagError(e.message);
    throw e;
  }
}

type Setter = (o: ServeOptions, value: string) => void;

function bool(flag: string, v: string): boolean {
  const s = v.toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(s)) return true;
  if (['false', '0', 'off', 'no'].includes(s)) return false;
  throw new FlagError(`invalid value for --${flag}: '${v}' (expected true or false)`);
}

function int(flag: string, v: string, min = 0): number {
  if (!/^-?\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
    throw new FlagError(`invalid value for --${flag}: '${v}' (expected an integer >= ${min})`);
  }
  return Number(v);
}

function pattern(flag: string, v: string): RegExp {
  try {
    return headerForwardPattern(flag, v);
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
}

function port(flag: string, v: string): number {
  const n = int(flag, v);
  if (n > 65535) throw new FlagError(`invalid value for --${flag}: '${v}' (expected a port 0..65535)`);
  return n;
}

const BOOL_FLAGS: Record<string, (o: ServeOptions, v: boolean) => void> = {
  'strict-model-config': (o, v) => (o.strictModelConfig = v),
  'disable-auto-complete-config': (o, v) => (o.disableAutoCompleteConfig = v),
  'exit-on-error': (o, v) => (o.exitOnError = v),
  'strict-readiness': (o, v) => (o.strictReadiness = v),
  'model-namespacing': (o, v) => (o.modelNamespacing = v),
  'allow-http': (o, v) => (o.allowHttp = v),
  'allow-grpc': (o, v) => (o.allowGrpc = v),
  'grpc-reflection': (o, v) => (o.grpcReflection = v),
  'allow-metrics': (o, v) => (o.allowMetrics = v),
  'allow-client-shm': (o, v) => (o.allowClientShm = v),
  'allow-model-file-load': (o, v) => (o.allowModelFileLoad = v),
  'strict-sandbox': (o, v) => (o.strictSandbox = v),
  'model-install-dependencies': (o, v) => (o.modelInstallDependencies = v),
  'log-info': (o, v) => (o.logInfo = v),
  'log-warning': (o, v) => (o.logWarning = v),
  'log-error': (o, v) => (o.logError = v),
  'grpc-use-ssl': (o, v) => (o.grpcSsl.useSsl = v),
  // As Triton: mutual preempts plain SSL and turns it on.
  'grpc-use-ssl-mutual': (o, v) => {
    o.grpcSsl.useMutualAuth = v;
    if (v) o.grpcSsl.useSsl = true;
  },
  'http-use-ssl': (o, v) => (o.httpSsl.useSsl = v),
  'http-use-ssl-mutual': (o, v) => {
    o.httpSsl.useMutualAuth = v;
    if (v) o.httpSsl.useSsl = true;
  },
};

function apiKey(flag: string, v: string): string {
  try {
    return checkApiKey(v, flag);
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
}

function restricted(flag: 'http-restricted-api' | 'grpc-restricted-protocol', into: Restrictions, v: string): void {
  try {
    addRestriction(into, flag, v);
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
}

const VALUE_FLAGS: Record<string, Setter> = {
  'model-repository': (o, v) => o.modelRepositories.push(v),
  'model-store': (o, v) => o.modelRepositories.push(v),
  'model-control-mode': (o, v) => {
    // Triton lowercases the value first (its QA writes EXPLICIT and POLL).
    const mode = v.toLowerCase();
    if (mode !== 'none' && mode !== 'poll' && mode !== 'explicit') {
      throw new FlagError(`invalid value for --model-control-mode: '${v}' (expected none, poll or explicit)`);
    }
    o.modelControlMode = mode;
  },
  'load-model': (o, v) => o.loadModels.push(v),
  'repository-poll-secs': (o, v) => (o.repositoryPollSecs = int('repository-poll-secs', v)),
  'repository-cache-dir': (o, v) => (o.repositoryCacheDir = v),
  'exit-timeout-secs': (o, v) => (o.exitTimeoutSecs = int('exit-timeout-secs', v)),
  'model-config-name': (o, v) => (o.modelConfigName = v),
  'http-port': (o, v) => (o.httpPort = port('http-port', v)),
  'grpc-port': (o, v) => (o.grpcPort = port('grpc-port', v)),
  'metrics-port': (o, v) => (o.metricsPort = port('metrics-port', v)),
  'http-address': (o, v) => (o.httpAddress = v),
  'grpc-address': (o, v) => (o.grpcAddress = v),
  'metrics-address': (o, v) => (o.metricsAddress = v),
  'health-port': (o, v) => (o.healthPort = port('health-port', v)),
  'health-address': (o, v) => (o.healthAddress = v),
  'openai-port': (o, v) => (o.openaiPort = port('openai-port', v)),
  'openai-address': (o, v) => (o.openaiAddress = v),
  'openai-api-key': (o, v) => void o.openaiApiKeys.push(apiKey('--openai-api-key', v)),
  'openai-api-key-file': (o, v) => void o.openaiApiKeyFiles.push(v),
  'http-max-input-size': (o, v) => (o.httpMaxInputSize = int('http-max-input-size', v, 1)),
  'http-max-json-size': (o, v) => (o.httpMaxJsonSize = int('http-max-json-size', v, 1)),
  'grpc-max-input-size': (o, v) => (o.grpcMaxInputSize = int('grpc-max-input-size', v, 1)),
  'max-buffered-request-size': (o, v) => (o.maxBufferedRequestSize = int('max-buffered-request-size', v, 1)),
  'stream-max-queued-size': (o, v) => (o.streamMaxQueuedSize = int('stream-max-queued-size', v, 1)),
  'stream-stall-timeout-secs': (o, v) => (o.streamStallTimeoutSecs = int('stream-stall-timeout-secs', v, 1)),
  // Another name for it, accepted as --help says.
  'http-max-buffered-body-size': (o, v) => (o.maxBufferedRequestSize = int('http-max-buffered-body-size', v, 1)),
  'max-tensor-elements': (o, v) => (o.maxTensorElements = int('max-tensor-elements', v, 1)),
  'http-max-header-count': (o, v) => (o.httpMaxHeaderCount = int('http-max-header-count', v, 1)),
  'http-headers-timeout-secs': (o, v) => (o.httpConnections = { ...o.httpConnections, headersTimeoutMs: int('http-headers-timeout-secs', v, 1) * 1000 }),
  'http-request-timeout-secs': (o, v) => (o.httpConnections = { ...o.httpConnections, requestTimeoutMs: int('http-request-timeout-secs', v, 1) * 1000 }),
  'http-max-connections': (o, v) => (o.httpConnections = { ...o.httpConnections, maxConnections: int('http-max-connections', v, 1) }),
  'model-log-rate': (o, v) => (o.modelLogRate = int('model-log-rate', v)),
  'model-type-check': (o, v) => {
    if (v !== 'error' && v !== 'warn' && v !== 'off') throw new FlagError(`invalid value for --model-type-check: '${v}' (expected error, warn or off)`);
    o.modelTypeCheck = v;
  },
  'grpc-max-connections': (o, v) => (o.grpcMaxConnections = int('grpc-max-connections', v, 1)),
  'metrics-max-connections': (o, v) => (o.metricsMaxConnections = int('metrics-max-connections', v, 1)),
  'health-max-connections': (o, v) => (o.healthMaxConnections = int('health-max-connections', v, 1)),
  'grpc-health-max-watches': (o, v) => (o.grpcHealthMaxWatches = int('grpc-health-max-watches', v, 1)),
  'grpc-first-request-timeout-secs': (o, v) => (o.grpcFirstRequestTimeoutSecs = int('grpc-first-request-timeout-secs', v, 1)),
  // Triton's ParseIntBoolOption: a level, or true/false for 1/0.
  'log-verbose': (o, v) => (o.logVerbose = /^(true|false)$/i.test(v) ? Number(v.toLowerCase() === 'true') : int('log-verbose', v)),
  'log-format': (o, v) => {
    if (v !== 'default' && v !== 'ISO8601') throw new FlagError(`invalid value for --log-format: '${v}' (expected default or ISO8601)`);
    o.logFormat = v;
  },
  'log-file': (o, v) => (o.logFile = v),
  'http-restricted-api': (o, v) => restricted('http-restricted-api', o.httpRestrictedApi, v),
  'grpc-restricted-protocol': (o, v) => restricted('grpc-restricted-protocol', o.grpcRestrictedProtocol, v),
  'grpc-server-cert': (o, v) => (o.grpcSsl.serverCert = v),
  'grpc-server-key': (o, v) => (o.grpcSsl.serverKey = v),
  'grpc-root-cert': (o, v) => (o.grpcSsl.rootCert = v),
  'http-server-cert': (o, v) => (o.httpSsl.serverCert = v),
  'http-server-key': (o, v) => (o.httpSsl.serverKey = v),
  'http-root-cert': (o, v) => (o.httpSsl.rootCert = v),
  'trace-config': (o, v) => void o.traceFlags.config.push(v),
  'metrics-config': (o, v) => metricsConfigSetting(o.metricsConfig, v),
  'cache-config': (o, v) => {
    const { cache, setting, value } = flagged(() => parseCacheConfigOption(v));
    (o.cacheConfig[cache] ??= {})[setting] = value;
  },
  'response-cache-byte-size': (o, v) => (o.responseCacheByteSize = v),
  'rate-limit': (o, v) => (o.rateLimit = flagged(() => parseRateLimitMode(v))),
  'rate-limit-resource': (o, v) => void o.rateLimitResources.push(flagged(() => parseRateLimitResource(v))),
  id: (o, v) => (o.serverId = v),
  'model-load-retry-count': (o, v) => (o.modelLoadRetryCount = int('model-load-retry-count', v)),
  'http-header-forward-pattern': (o, v) => (o.headerForward.http = pattern('http-header-forward-pattern', v)),
  'grpc-header-forward-pattern': (o, v) => (o.headerForward.grpc = pattern('grpc-header-forward-pattern', v)),
  'grpc-keepalive-time': (o, v) => (o.grpcConnection.keepaliveTimeMs = int('grpc-keepalive-time', v)),
  'grpc-keepalive-timeout': (o, v) => (o.grpcConnection.keepaliveTimeoutMs = int('grpc-keepalive-timeout', v)),
  'grpc-max-connection-age': (o, v) => (o.grpcConnection.maxConnectionAgeMs = int('grpc-max-connection-age', v)),
  'grpc-max-connection-age-grace': (o, v) => (o.grpcConnection.maxConnectionAgeGraceMs = int('grpc-max-connection-age-grace', v)),
  ...modelLimitFlags(int, (message) => {
    throw new FlagError(message);
  }),
  // Deprecated in Triton, still accepted (--trace-config wins).
  'trace-file': (o, v) => (o.traceFlags.file = v),
  'trace-level': (o, v) => void o.traceFlags.level.push(v),
  'trace-rate': (o, v) => (o.traceFlags.rate = v),
  'trace-count': (o, v) => (o.traceFlags.count = v),
  'trace-log-frequency': (o, v) => (o.traceFlags.logFrequency = v),
  'backend-config': (o, v) => {
    const comma = v.indexOf(',');
    const pair = comma < 0 ? v : v.slice(comma + 1);
    const backend = comma < 0 ? '' : v.slice(0, comma);
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new FlagError(`invalid value for --backend-config: '${v}' (expected <backend>,<key>=<value>)`);
    (o.backendConfig[backend] ??= {})[pair.slice(0, eq)] = pair.slice(eq + 1);
  },
};

export const SERVE_USAGE = `usage: tritium serve --model-repository <dir> [options]

  --model-repository, --model-store <dir>   model repository: a folder, s3://, as:// or gs:// (repeatable)
  --model-control-mode none|poll|explicit   (default none)
  --load-model <name>                       explicit mode: load at start (repeatable, '*' = all)
  --repository-poll-secs <n>                poll mode interval (default 15)
  --repository-cache-dir <dir>              local copies of s3:// as:// gs:// repositories (default: temporary)
  --strict-model-config, --disable-auto-complete-config
  --model-namespacing <bool> (false)        repositories may hold models of the same name; a name held twice is ambiguous to clients
  --exit-on-error <bool> (true)  --strict-readiness <bool> (true)  --exit-timeout-secs <n> (30)
  --model-config-name <name>
  --http-port/--grpc-port/--metrics-port <n> (8000/8001/8002; 0 = any free port)
  --allow-http/--allow-grpc/--allow-metrics <bool> (true)
  --http-address/--grpc-address/--metrics-address <addr> (0.0.0.0)
  --health-port <n>  --health-address <addr>  /v2/health/live and /ready on their own thread (off; answered while the main thread is swamped);
      HTTPS with --http-use-ssl and the restricted 'health' header apply there too, but no client certificate is asked for
      (kubelet's probes cannot present one)
  --openai-port <n>  --openai-address <addr>  the OpenAI routes (/v1/...) on a listener of their own too (off; always on the HTTP port)
      with the HTTP port's TLS (--http-use-ssl, --http-use-ssl-mutual) and --http-max-connections
  --openai-api-key <key> (repeatable)  --openai-api-key-file <path> (a key per line)
                                            the OpenAI routes require 'Authorization: Bearer <key>' (off: no key needed)
  --http-max-input-size <bytes> (64 MB)  --http-max-json-size <bytes> (16 MB)  --max-tensor-elements <n>  --http-max-header-count <n>
  --grpc-max-input-size <bytes> (64 MB)    one gRPC request message, on the wire or inflated (RESOURCE_EXHAUSTED past it)
  --max-buffered-request-size <bytes>       request bytes held at once, HTTP and gRPC together (a quarter of memory;
                                            503 / RESOURCE_EXHAUSTED past it; also --http-max-buffered-body-size)
  --stream-max-queued-size <bytes> (4 MiB)  response bytes queued for one streaming client (ModelStreamInfer,
                                            generate_stream) that has not read them; past it the model's sends wait
  --stream-stall-timeout-secs <n> (60)      a stream held at that bound this long ends (RESOURCE_EXHAUSTED / error event)
  --http-headers-timeout-secs <n> (60)  --http-request-timeout-secs <n> (60)  --http-max-connections <n> (10000)
  --grpc-max-connections <n> (10000)  --grpc-first-request-timeout-secs <n> (10: a connection with no call by then is closed)
  --metrics-max-connections <n> (64)  --health-max-connections <n> (64)  the metrics and health listeners' caps
  --grpc-reflection <bool> (true)  gRPC server reflection v1 and v1alpha (grpcurl, Postman: no proto files needed)
  --grpc-health-max-watches <n> (1000)  grpc.health.v1 Watch streams open at once (RESOURCE_EXHAUSTED past it)
      the caps are lowered, in proportion, to fit below the descriptor limit (ulimit -n) less a quarter kept
  --allow-client-shm <bool> (false)  --allow-model-file-load <bool> (false)
  --model-log-rate <bytes/s> (65536)        per instance: a model's output (stdout, stderr, log calls) logged per second; lines past it dropped, counted
  --strict-sandbox <bool> (false)           a process-isolated model whose sandbox lacks a guarantee on this host fails to load (false: it loads, with a warning)
  --model-type-check error|warn|off (error) a model.ts that does not type-check fails to load (warn: it loads, each error a warning);
                                            a model's tritium.type_check parameter overrides it
  --model-install-dependencies <bool> (false) a model folder with its own package.json and lockfile but no node_modules gets
                                            \`npm ci --omit=dev --ignore-scripts\` at load (it may fetch); false: such a load is refused
  --log-verbose <n>  --log-info/--log-warning/--log-error <bool>  --log-format default|ISO8601  --log-file <path>
  --backend-config <backend>,<key>=<value>
  --metrics-config <setting>=<value>          summary_latencies|histogram_latencies|counter_latencies=<bool>, summary_quantiles=0.5:0.05,0.99:0.001, summary_max_age=<s>
  --cache-config local,size=<bytes>           response cache shared by models with response_cache { enable: true }
  --cache-config redis,<setting>=<value>      the same in Redis, shared by replicas: host=, port= (required), user, password, db,
                                              connect_timeout (1000), socket_timeout (500), pool_size (1), tls_enabled, cert, key,
                                              cacert, cacert_dir, sni, max_entry_bytes (1048576)
  --rate-limit off|execution_count (off)      --rate-limit-resource <name>:<count>[:<device>] (repeatable)
  --trace-config <setting>=<value>            level=OFF|TIMESTAMPS|TENSORS, rate=<n> (1000), count=<n> (-1), mode=triton|opentelemetry
  --trace-config triton,<setting>=<value>     file=<path> (trace JSON; log-frequency=<n> writes <path>.0, .1, ...)
  --trace-config opentelemetry,<setting>=<value>   url=<OTLP/HTTP endpoint>, resource=<key>=<value>, bsp_max_queue_size, bsp_schedule_delay, bsp_max_export_batch_size
  --http-restricted-api <apis>:<header>=<value>   gate categories behind a header (repeatable)
  --grpc-restricted-protocol <protocols>:<key>=<value>   same over gRPC (metadata triton-grpc-protocol-<key>)
      categories: health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging
  --grpc-use-ssl <bool>  --grpc-use-ssl-mutual <bool>  --grpc-server-cert/--grpc-server-key/--grpc-root-cert <pem file>
  --http-use-ssl <bool>  --http-use-ssl-mutual <bool>  --http-server-cert/--http-server-key/--http-root-cert <pem file>
  --grpc-keepalive-time/--grpc-keepalive-timeout/--grpc-max-connection-age/--grpc-max-connection-age-grace <ms>
  --id <name>                                 the server's name in server metadata (triton)
  --model-load-retry-count <n>                a failed model load is tried again n times (0)
${MODEL_LIMIT_USAGE}  --http-header-forward-pattern/--grpc-header-forward-pattern <regex>   matching headers become request parameters
  Triton's other flags (--http-thread-count, --pinned-memory-pool-byte-size, --backend-directory, ...) are
  accepted and checked, and a warning names each one given: they change nothing here.
`;

/** SSL needs a certificate and key, mutual TLS also the CA that client certificates chain to. */
function checkTls(prefix: 'grpc' | 'http', t: TlsOptions): void {
  if (!t.useSsl) return;
  if (!t.serverCert || !t.serverKey) {
    throw new FlagError(`--${prefix}-use-ssl needs --${prefix}-server-cert and --${prefix}-server-key (PEM files)`);
  }
  if (t.useMutualAuth && !t.rootCert) {
    throw new FlagError(`--${prefix}-use-ssl-mutual needs --${prefix}-root-cert (PEM file of the CA that signs client certificates)`);
  }
}

/** A tritonserver flag that changes nothing here: its value checked as Triton's, then noted for the start-up warning. */
function noteWithoutEffect(o: ServeOptions, name: string, value: string | boolean): void {
  const spec = TRITON_FLAGS_WITHOUT_EFFECT[name]!;
  try {
    checkFlagWithoutEffect(name, spec, value);
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
  if (!o.flagsWithoutEffect.some((f) => f.flag === name)) o.flagsWithoutEffect.push({ flag: name, why: spec.why });
}

/**
 * Parses the serve flags named in `accepted` (without `--`) into options; every other argument is
 * returned in `rest`, in order, for the command to handle (its own flags and positional paths).
 * For commands that share some of serve's flags (`tritium config`, `tritium model run`).
 */
export function parseSomeServeFlags(
  argv: readonly string[],
  accepted: readonly string[],
  { abbreviations = false }: { abbreviations?: boolean } = {},
): { options: ServeOptions; rest: string[] } {
  const o = defaultServeOptions();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const given = arg.startsWith('--') ? (eq < 0 ? arg.slice(2) : arg.slice(2, eq)) : '';
    const name = abbreviations ? unabbreviated(given, accepted) : given;
    if (!accepted.includes(name)) {
      rest.push(arg);
      continue;
    }
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const without = Object.hasOwn(TRITON_FLAGS_WITHOUT_EFFECT, name) ? TRITON_FLAGS_WITHOUT_EFFECT[name] : undefined;
    const boolSetter = BOOL_FLAGS[name] ?? (without?.kind === 'bool' ? () => {} : undefined);
    if (boolSetter) {
      let v: boolean;
      if (inline !== undefined) v = bool(name, inline);
      else if (argv[i + 1] !== undefined && /^(true|false|1|0|on|off|yes|no)$/i.test(argv[i + 1]!)) v = bool(name, argv[++i]!);
      else v = true;
      boolSetter(o, v);
      if (without) noteWithoutEffect(o, name, v);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new FlagError(`--${name} needs a value`);
    if (without) noteWithoutEffect(o, name, value);
    else VALUE_FLAGS[name]!(o, value);
  }
  return { options: o, rest };
}

/**
 * tritonserver reads its flags with getopt_long, which takes any unambiguous prefix of a long
 * option (Triton's QA starts it with `--log-warn=false`): the one flag `given` abbreviates, or
 * `given` unchanged when it names a flag or none. A prefix of several flags is refused with
 * getopt_long's message.
 */
function unabbreviated(given: string, accepted: readonly string[]): string {
  if (given === '' || accepted.includes(given)) return given;
  const candidates = accepted.filter((f) => f.startsWith(given));
  if (candidates.length > 1) throw new FlagError(`option '--${given}' is ambiguous; possibilities: ${candidates.map((c) => `'--${c}'`).join(' ')}`);
  return candidates[0] ?? given;
}

/** Every flag `tritium serve` takes (without `--`): its own and Triton's without effect. */
export function serveFlagNames(): string[] {
  return [...Object.keys(BOOL_FLAGS), ...Object.keys(VALUE_FLAGS), ...Object.keys(TRITON_FLAGS_WITHOUT_EFFECT)];
}

/** Parses argv (after `serve`). Throws FlagError with a message naming the flag. */
export function parseServeFlags(argv: readonly string[]): ServeOptions {
  const { options: o, rest } = parseSomeServeFlags(argv, serveFlagNames(), { abbreviations: true });
  const extra = rest[0];
  if (extra !== undefined) {
    throw new FlagError(extra.startsWith('--') ? `unrecognized flag '${extra.split('=')[0]}'` : `unexpected argument '${extra}'`);
  }
  if (o.modelRepositories.length === 0) throw new FlagError('--model-repository must be specified');
  if (o.loadModels.length && o.modelControlMode !== 'explicit') {
    throw new FlagError('--load-model can only be used with --model-control-mode=explicit');
  }
  checkTls('grpc', o.grpcSsl);
  checkTls('http', o.httpSsl);
  checkModelLimitOptions(o, (message) => {
    throw new FlagError(message);
  });
  for (const file of o.openaiApiKeyFiles) {
    try {
      o.openaiApiKeys.push(...readApiKeyFile(file).map((key) => checkApiKey(key, `--openai-api-key-file '${file}'`)));
    } catch (e) {
      throw new FlagError((e as Error).message);
    }
  }
  o.trace = traceConfigOf(o.traceFlags);
  const cache = flagged(() => responseCacheOf(o.cacheConfig, o.responseCacheByteSize));
  if (cache && 'localBytes' in cache) o.responseCacheBytes = cache.localBytes;
  else if (cache) o.redisCache = cache.redis;
  return o;
}
