/**
 * `tritium serve` flags, named and defaulted as tritonserver's (docs/triton-compatibility.md §7). Both
 * `--flag=value` and `--flag value` work, and so does an unambiguous prefix of a flag's name, as with
 * tritonserver's getopt_long; booleans take Triton's values in any case (true/on/1, false/off/0, and
 * yes/no) and also a bare `--flag` (= true).
 */

import { addRestriction, type Restrictions } from '../protocol/restricted.ts';
import type { TlsOptions } from '../protocol/tls.ts';
import { headerForwardPattern } from '../protocol/header-forward.ts';
import { checkApiKey, readApiKeyFile } from '../openai/api-keys.ts';
import { parseTraceFlags, TraceConfigError, type TraceConfig, type TraceFlags } from '../tracing/trace-config.ts';
import {
  CacheOrRateFlagError,
  parseCacheConfigOption,
  parseRateLimitMode,
  parseRateLimitResource,
  responseCacheOf,
} from './cache-and-rate-flags.ts';
import { checkFlagWithoutEffect, TRITON_FLAGS_WITHOUT_EFFECT } from './triton-flags-without-effect.ts';
import { checkModelLimitOptions, modelLimitFlags } from './model-limit-flags.ts';
import { defaultServeOptions, type MetricsConfig, type ServeOptions } from './serve-options.ts';

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
