/**
 * `tritium serve` flags, named and defaulted as tritonserver's (reference §5.5). Both
 * `--flag=value` and `--flag value` work; booleans also accept a bare `--flag` (= true).
 */

import { DEFAULT_LIMITS } from '../protocol/limits.ts';

export type ModelControlMode = 'none' | 'poll' | 'explicit';

export interface ServeOptions {
  modelRepositories: string[];
  modelControlMode: ModelControlMode;
  loadModels: string[];
  repositoryPollSecs: number;
  strictModelConfig: boolean;
  disableAutoCompleteConfig: boolean;
  exitOnError: boolean;
  strictReadiness: boolean;
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
  httpMaxInputSize: number;
  maxTensorElements: number;
  httpMaxHeaderCount: number;
  allowClientShm: boolean;
  allowModelFileLoad: boolean;
  logVerbose: number;
  logInfo: boolean;
  logWarning: boolean;
  logError: boolean;
  logFormat: 'default' | 'ISO8601';
  logFile?: string;
  /** `--backend-config=<backend>,<key>=<value>` collected per backend. */
  backendConfig: Record<string, Record<string, string>>;
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
    httpMaxInputSize: DEFAULT_LIMITS.maxInputBytes,
    maxTensorElements: DEFAULT_LIMITS.maxTensorElements,
    httpMaxHeaderCount: DEFAULT_LIMITS.maxHeaderCount,
    allowClientShm: false,
    allowModelFileLoad: false,
    logVerbose: 0,
    logInfo: true,
    logWarning: true,
    logError: true,
    logFormat: 'default',
    backendConfig: {},
  };
}

export class FlagError extends Error {}

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
  'allow-http': (o, v) => (o.allowHttp = v),
  'allow-grpc': (o, v) => (o.allowGrpc = v),
  'allow-metrics': (o, v) => (o.allowMetrics = v),
  'allow-client-shm': (o, v) => (o.allowClientShm = v),
  'allow-model-file-load': (o, v) => (o.allowModelFileLoad = v),
  'log-info': (o, v) => (o.logInfo = v),
  'log-warning': (o, v) => (o.logWarning = v),
  'log-error': (o, v) => (o.logError = v),
};

const VALUE_FLAGS: Record<string, Setter> = {
  'model-repository': (o, v) => o.modelRepositories.push(v),
  'model-store': (o, v) => o.modelRepositories.push(v),
  'model-control-mode': (o, v) => {
    if (v !== 'none' && v !== 'poll' && v !== 'explicit') {
      throw new FlagError(`invalid value for --model-control-mode: '${v}' (expected none, poll or explicit)`);
    }
    o.modelControlMode = v;
  },
  'load-model': (o, v) => o.loadModels.push(v),
  'repository-poll-secs': (o, v) => (o.repositoryPollSecs = int('repository-poll-secs', v)),
  'exit-timeout-secs': (o, v) => (o.exitTimeoutSecs = int('exit-timeout-secs', v)),
  'model-config-name': (o, v) => (o.modelConfigName = v),
  'http-port': (o, v) => (o.httpPort = port('http-port', v)),
  'grpc-port': (o, v) => (o.grpcPort = port('grpc-port', v)),
  'metrics-port': (o, v) => (o.metricsPort = port('metrics-port', v)),
  'http-address': (o, v) => (o.httpAddress = v),
  'grpc-address': (o, v) => (o.grpcAddress = v),
  'metrics-address': (o, v) => (o.metricsAddress = v),
  'http-max-input-size': (o, v) => (o.httpMaxInputSize = int('http-max-input-size', v, 1)),
  'max-tensor-elements': (o, v) => (o.maxTensorElements = int('max-tensor-elements', v, 1)),
  'http-max-header-count': (o, v) => (o.httpMaxHeaderCount = int('http-max-header-count', v, 1)),
  'log-verbose': (o, v) => (o.logVerbose = int('log-verbose', v)),
  'log-format': (o, v) => {
    if (v !== 'default' && v !== 'ISO8601') throw new FlagError(`invalid value for --log-format: '${v}' (expected default or ISO8601)`);
    o.logFormat = v;
  },
  'log-file': (o, v) => (o.logFile = v),
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

  --model-repository, --model-store <dir>   model repository (repeatable)
  --model-control-mode none|poll|explicit   (default none)
  --load-model <name>                       explicit mode: load at start (repeatable, '*' = all)
  --repository-poll-secs <n>                poll mode interval (default 15)
  --strict-model-config, --disable-auto-complete-config
  --exit-on-error <bool> (true)  --strict-readiness <bool> (true)  --exit-timeout-secs <n> (30)
  --model-config-name <name>
  --http-port/--grpc-port/--metrics-port <n> (8000/8001/8002; 0 = any free port)
  --allow-http/--allow-grpc/--allow-metrics <bool> (true)
  --http-address/--grpc-address/--metrics-address <addr> (0.0.0.0)
  --http-max-input-size <bytes> (64 MB)  --max-tensor-elements <n>  --http-max-header-count <n>
  --allow-client-shm <bool> (false)  --allow-model-file-load <bool> (false)
  --log-verbose <n>  --log-info/--log-warning/--log-error <bool>  --log-format default|ISO8601  --log-file <path>
  --backend-config <backend>,<key>=<value>
`;

/** Parses argv (after `serve`). Throws FlagError with a message naming the flag. */
export function parseServeFlags(argv: readonly string[]): ServeOptions {
  const o = defaultServeOptions();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new FlagError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const boolSetter = BOOL_FLAGS[name];
    if (boolSetter) {
      if (inline !== undefined) boolSetter(o, bool(name, inline));
      else if (argv[i + 1] !== undefined && /^(true|false|1|0|on|off|yes|no)$/i.test(argv[i + 1]!)) boolSetter(o, bool(name, argv[++i]!));
      else boolSetter(o, true);
      continue;
    }
    const setter = VALUE_FLAGS[name];
    if (!setter) throw new FlagError(`unrecognized flag '--${name}'`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new FlagError(`--${name} needs a value`);
    setter(o, value);
  }
  if (o.modelRepositories.length === 0) throw new FlagError('--model-repository must be specified');
  if (o.loadModels.length && o.modelControlMode !== 'explicit') {
    throw new FlagError('--load-model can only be used with --model-control-mode=explicit');
  }
  return o;
}
