/**
 * Triton's `--trace-config` flag (server: command_line_parser.cc ParseTraceConfigOption and
 * PostProcessTraceArgs): `--trace-config <setting>=<value>` for the global settings (level, rate,
 * count, mode), `--trace-config triton,<setting>=<value>` (file, log-frequency) and
 * `--trace-config opentelemetry,<setting>=<value>` (url, resource, bsp_*). The deprecated
 * `--trace-file`, `--trace-level`, `--trace-rate`, `--trace-count`, `--trace-log-frequency` map onto
 * the same settings (the --trace-config value wins, as in Triton). Unknown settings are refused with
 * the list of known ones (Triton ignores them silently).
 */

export type TraceMode = 'triton' | 'opentelemetry';

/** Trace level as a set: OFF is neither. */
export interface TraceLevel {
  readonly timestamps: boolean;
  readonly tensors: boolean;
}

export const LEVEL_OFF: TraceLevel = { timestamps: false, tensors: false };

export interface OtelConfig {
  /** OTLP/HTTP endpoint (Triton's default `http://localhost:4318/v1/traces`). */
  readonly url: string;
  /** Resource attributes; `service.name` defaults to `triton-inference-server` as in Triton. */
  readonly resource: Readonly<Record<string, string>>;
  readonly bspMaxQueueSize: number;
  readonly bspScheduleDelayMs: number;
  readonly bspMaxExportBatchSize: number;
}

export interface TraceConfig {
  readonly mode: TraceMode;
  readonly level: TraceLevel;
  readonly rate: number;
  readonly count: number;
  /** `triton,file=`: where trace files are written (operator only: never from the network). */
  readonly file: string;
  readonly logFrequency: number;
  readonly otel: OtelConfig;
}

/** The raw flags as given: `--trace-config` values and the deprecated single flags. */
export interface TraceFlags {
  readonly config: readonly string[];
  readonly file?: string;
  readonly level?: readonly string[];
  readonly rate?: string;
  readonly count?: string;
  readonly logFrequency?: string;
}

export class TraceConfigError extends Error {}

const GLOBAL_SETTINGS = ['level', 'rate', 'count', 'mode'];
const MODE_SETTINGS: Record<TraceMode, readonly string[]> = {
  triton: ['file', 'log-frequency'],
  opentelemetry: ['url', 'resource', 'bsp_max_queue_size', 'bsp_schedule_delay', 'bsp_max_export_batch_size'],
};

const FORMAT = "--trace-config option format is '<trace mode>,<setting>=<value>'.";

/** Triton's ParseTraceModeOption. */
export function parseTraceMode(value: string): TraceMode {
  const v = value.toLowerCase();
  if (v === 'triton' || v === 'opentelemetry') return v;
  throw new TraceConfigError(`invalid value for trace mode option: ${value}. Available options are "triton" and "opentelemetry"`);
}

/** Triton's ParseTraceLevelOption: the level one value adds (OFF: none). */
export function parseTraceLevel(value: string): TraceLevel {
  const v = value.toLowerCase();
  if (v === 'false' || v === 'off') return LEVEL_OFF;
  if (['true', 'on', 'min', 'max', 'timestamps'].includes(v)) return { timestamps: true, tensors: false };
  if (v === 'tensors') return { timestamps: false, tensors: true };
  throw new TraceConfigError(`invalid value for trace level option: ${value}`);
}

function integer(what: string, value: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw new TraceConfigError(`Bad option: "--trace-config ${what}". invalid value '${value}' (expected an integer from ${min} to ${max})`);
  }
  return Number(value);
}

const UINT32_MAX = 4294967295;
const INT32_MAX = 2147483647;

/** One `--trace-config` value split as Triton does: [mode or '' (global), setting, value]. */
function split(arg: string): [TraceMode | '', string, string] {
  const comma = arg.indexOf(',');
  const eq = arg.indexOf('=', comma + 1);
  if (comma === 0) {
    throw new TraceConfigError(`No trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ${arg}`);
  }
  // A comma after the '=' belongs to the value (global settings have none before it).
  const scoped = comma > 0 && (eq < 0 || comma < eq);
  const mode = scoped ? parseTraceMode(arg.slice(0, comma)) : '';
  const rest = scoped ? arg.slice(comma + 1) : arg;
  const at = rest.indexOf('=');
  const setting = at < 0 ? '' : rest.slice(0, at);
  const value = at < 0 ? '' : rest.slice(at + 1);
  if (at < 0 || setting === '' || value === '') throw new TraceConfigError(`${FORMAT} Got ${arg}`);
  const known = mode === '' ? GLOBAL_SETTINGS : MODE_SETTINGS[mode];
  if (!known.includes(setting)) {
    const where = mode === '' ? 'global trace setting' : `'${mode}' trace setting`;
    throw new TraceConfigError(`unknown ${where} '${setting}' in --trace-config ${arg} (known: ${known.join(', ')})`);
  }
  return [mode, setting, value];
}

function otelDefaults(env: NodeJS.ProcessEnv): OtelConfig {
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    return raw === undefined || raw === '' ? fallback : integer(name, raw, 0, UINT32_MAX);
  };
  return {
    url: 'http://localhost:4318/v1/traces',
    resource: { 'service.name': 'triton-inference-server' },
    bspMaxQueueSize: num('OTEL_BSP_MAX_QUEUE_SIZE', 2048),
    bspScheduleDelayMs: num('OTEL_BSP_SCHEDULE_DELAY', 5000),
    bspMaxExportBatchSize: num('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
  };
}

/** The trace configuration the flags describe (Triton's defaults: OFF, rate 1000, count -1, mode triton). */
export function parseTraceFlags(flags: TraceFlags, env: NodeJS.ProcessEnv = process.env): TraceConfig {
  let mode: TraceMode = 'triton';
  let level: TraceLevel = LEVEL_OFF;
  let explicitOff = false;
  const addLevel = (v: string): void => {
    const l = parseTraceLevel(v);
    if (!l.timestamps && !l.tensors) explicitOff = true;
    level = { timestamps: level.timestamps || l.timestamps, tensors: level.tensors || l.tensors };
  };
  for (const v of flags.level ?? []) addLevel(v);
  let rate = flags.rate !== undefined ? integer('rate', flags.rate, 0, UINT32_MAX) : 1000;
  let count = flags.count !== undefined ? integer('count', flags.count, -1, INT32_MAX) : -1;
  let file = flags.file ?? '';
  let logFrequency = flags.logFrequency !== undefined ? integer('log-frequency', flags.logFrequency, 0, UINT32_MAX) : 0;
  const otel = { ...otelDefaults(env), resource: { ...otelDefaults(env).resource } };
  const parsed = flags.config.map(split);
  // Environment resource attributes first (OTEL_RESOURCE_ATTRIBUTES), flags override them.
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) otel.resource[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  for (const [scope, setting, value] of parsed) {
    if (scope === '') {
      if (setting === 'mode') mode = parseTraceMode(value);
      if (setting === 'level') addLevel(value);
      if (setting === 'rate') rate = integer('rate', value, 0, UINT32_MAX);
      if (setting === 'count') count = integer('count', value, -1, INT32_MAX);
    } else if (scope === 'triton') {
      if (setting === 'file') file = value;
      if (setting === 'log-frequency') logFrequency = integer('triton,log-frequency', value, 0, UINT32_MAX);
    } else {
      if (setting === 'url') otel.url = checkUrl(value);
      if (setting === 'resource') {
        const at = value.indexOf('=');
        if (at <= 0) throw new TraceConfigError(`Bad option: "--trace-config opentelemetry,resource=${value}". expected resource=<key>=<value>`);
        otel.resource[value.slice(0, at)] = value.slice(at + 1);
      }
      if (setting === 'bsp_max_queue_size') otel.bspMaxQueueSize = integer('opentelemetry,bsp_max_queue_size', value, 1, UINT32_MAX);
      if (setting === 'bsp_schedule_delay') otel.bspScheduleDelayMs = integer('opentelemetry,bsp_schedule_delay', value, 0, UINT32_MAX);
      if (setting === 'bsp_max_export_batch_size') otel.bspMaxExportBatchSize = integer('opentelemetry,bsp_max_export_batch_size', value, 1, UINT32_MAX);
    }
  }
  // An export batch larger than the queue is not refused: Triton's QA sets bsp_max_queue_size=1 with
  // the default batch size of 512 and expects spans to be dropped (otel-exporter.ts exports batches
  // of at most the queue's size).
  if (explicitOff) level = LEVEL_OFF;
  return { mode, level, rate, count, file, logFrequency, otel };
}

/**
 * The OTLP/HTTP endpoint. Triton hands the value to opentelemetry-cpp's exporter, whose HTTP client
 * reads a URL without a scheme as http:// (Triton's QA writes `url=localhost:$OTLP_PORT/v1/traces`):
 * so does this.
 */
function checkUrl(value: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new TraceConfigError(`Bad option: "--trace-config opentelemetry,url=${value}". not a URL (expected e.g. http://localhost:4318/v1/traces)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TraceConfigError(`Bad option: "--trace-config opentelemetry,url=${value}". OTLP/HTTP needs an http:// or https:// URL`);
  }
  return withScheme;
}

/** Triton's level strings as the trace settings API reports them. */
export function levelStrings(level: TraceLevel): string[] {
  if (!level.timestamps && !level.tensors) return ['OFF'];
  return [...(level.timestamps ? ['TIMESTAMPS'] : []), ...(level.tensors ? ['TENSORS'] : [])];
}
