/**
 * Trace settings, global and per model, with Triton's semantics (server: tracer.cc TraceManager
 * UpdateTraceSetting / GetTraceSetting): a model's setting starts as a copy of the global one; each
 * field it did not set itself follows the global setting when that changes; clearing a field (null
 * over HTTP, an empty value list over gRPC) makes it follow again (globally: back to the startup
 * value); a model with no field of its own goes back to the global setting. A setting that would
 * trace but cannot (rate 0, no trace file in triton mode) is refused: `Attempting to set invalid
 * trace setting :<reason>`.
 *
 * The trace file and the mode are the operator's (`--trace-config`): a request that names
 * `trace_file` is refused as Triton refuses it (UNSUPPORTED, `trace file location can not be
 * updated through network protocol`), so no client can make the server write where it chooses.
 */
import { InferError } from '@tritium/core';
import { LEVEL_OFF, levelStrings, type OtelConfig, type TraceConfig, type TraceLevel, type TraceMode } from './trace-config.ts';

export const TRACE_FILE_UPDATE_MESSAGE = 'trace file location can not be updated through network protocol';

export interface TraceValues {
  readonly level: TraceLevel;
  readonly rate: number;
  readonly count: number;
  readonly logFrequency: number;
  readonly file: string;
  readonly mode: TraceMode;
}

type Field = 'level' | 'rate' | 'count' | 'logFrequency';
const FIELDS: readonly Field[] = ['level', 'rate', 'count', 'logFrequency'];

/** One update: a value sets the field, `null` clears it (follow the fallback), absent leaves it. */
export type TraceUpdate = { -readonly [K in Field]?: TraceValues[K] | null };

/** Sampling state and buffered output of one setting (replaced, never mutated, on update; Triton's TraceSetting). */
export class TraceSetting {
  /** Requests seen (rate), traces created and traces written (count), traces waiting for the next file. */
  private seen = 0;
  created = 0;
  collected = 0;
  count: number;
  readonly invalidReason: string;

  constructor(
    readonly values: TraceValues,
    readonly specified: ReadonlySet<Field>,
  ) {
    this.count = values.count;
    const l = values.level;
    this.invalidReason =
      !l.timestamps && !l.tensors
        ? 'tracing is disabled'
        : values.rate === 0
          ? 'sample rate must be non-zero'
          : values.mode === 'triton' && values.file === ''
            ? 'trace file name is not given'
            : '';
  }

  /** Triton's Valid(): nothing wrong and traces left to take. */
  get valid(): boolean {
    return this.invalidReason === '' && this.count !== 0;
  }

  /**
   * Triton's TraceSetting::SampleTrace: every `rate`-th request while traces are left; `force` (a
   * propagated OpenTelemetry context) traces regardless of rate and count.
   */
  sample(force: boolean): boolean {
    let hit = false;
    if (this.values.rate !== 0 && (this.valid || force)) {
      hit = ++this.seen % this.values.rate === 0;
      if (hit && this.count > 0) {
        this.count--;
        this.created++;
      } else if (hit && this.count === 0) hit = false;
    }
    return hit || force;
  }
}

export class TraceSettingsStore {
  private readonly defaults: TraceSetting;
  private global: TraceSetting;
  private readonly models = new Map<string, TraceSetting>();
  /** Settings replaced by an update: their buffered traces are written by `onRetire`. */
  onRetire: (setting: TraceSetting) => void = () => {};

  constructor(private readonly config: TraceConfig) {
    const values: TraceValues = {
      level: config.level,
      rate: config.rate,
      count: config.count,
      logFrequency: config.logFrequency,
      file: config.file,
      mode: config.mode,
    };
    this.defaults = new TraceSetting(values, new Set());
    this.global = new TraceSetting(values, new Set());
  }

  get mode(): TraceMode {
    return this.config.mode;
  }

  get otel(): OtelConfig {
    return this.config.otel;
  }

  /** The setting a request to `model` samples with (the model's own, else the global one). */
  settingFor(model: string): TraceSetting {
    return this.models.get(model) ?? this.global;
  }

  /** Every live setting (for flushing at shutdown). */
  all(): TraceSetting[] {
    return [this.global, ...this.models.values()];
  }

  /** Triton's UpdateTraceSetting: validated before anything changes. */
  update(update: TraceUpdate, model?: string): void {
    const next = this.build(update, model);
    if (model) {
      this.replaceModel(model, next);
      return;
    }
    this.retire(this.global);
    this.global = next!;
    // Models that follow some global fields take the new values.
    for (const [name, setting] of [...this.models]) {
      if (setting.specified.size === FIELDS.length) continue;
      this.replaceModel(name, this.build({}, name));
    }
  }

  private replaceModel(model: string, next: TraceSetting | undefined): void {
    const old = this.models.get(model);
    if (old) this.retire(old);
    if (next) this.models.set(model, next);
    else this.models.delete(model);
  }

  private retire(setting: TraceSetting): void {
    this.onRetire(setting);
  }

  /** The setting `update` makes (undefined: a model with nothing of its own follows the global setting). */
  private build(update: TraceUpdate, model: string | undefined): TraceSetting | undefined {
    const current = model ? this.models.get(model) : this.global;
    const fallback = model ? this.global : this.defaults;
    const specified = new Set<Field>();
    const values: { -readonly [K in keyof TraceValues]: TraceValues[K] } = { ...fallback.values };
    const set = <K extends Field>(field: K, value: TraceValues[K]): void => {
      specified.add(field);
      values[field] = value;
    };
    for (const f of FIELDS) {
      const change = update[f];
      if (change === null) continue;
      if (change !== undefined) set(f, change);
      else if (current?.specified.has(f)) set(f, current.values[f]);
    }
    if (model && specified.size === 0) return undefined;
    const setting = new TraceSetting(values, specified);
    const level = setting.values.level;
    if (!setting.valid && (level.timestamps || level.tensors) && setting.invalidReason !== '') {
      throw new InferError('INVALID_ARG', `Attempting to set invalid trace setting :${setting.invalidReason}`);
    }
    return setting;
  }

  /** The settings as the API reports them (gRPC's map of value lists; HTTP flattens all but trace_level). */
  report(model?: string): Record<string, string[]> {
    const s = model ? this.settingFor(model) : this.global;
    const v = s.values;
    const out: Record<string, string[]> = {
      trace_level: levelStrings(v.level),
      trace_rate: [String(v.rate)],
      trace_count: [String(s.count)],
    };
    if (v.mode === 'triton') {
      out.log_frequency = [String(v.logFrequency)];
      out.trace_file = [v.file];
    }
    out.trace_mode = [v.mode];
    if (v.mode === 'opentelemetry') {
      const o = this.config.otel;
      out.url = [o.url];
      out.resource = Object.entries(o.resource).map(([k, val]) => `${k}=${val}`);
      out.bsp_max_queue_size = [String(o.bspMaxQueueSize)];
      out.bsp_schedule_delay = [String(o.bspScheduleDelayMs)];
      out.bsp_max_export_batch_size = [String(o.bspMaxExportBatchSize)];
    }
    return out;
  }
}

// ---- reading updates from the wire (HTTP JSON, gRPC SettingValue lists) ----------------------

const UINT32_MAX = 4294967295;
const INT32_MAX = 2147483647;

const RANGES: Record<'trace_rate' | 'trace_count' | 'log_frequency', [number, number]> = {
  trace_rate: [0, UINT32_MAX],
  trace_count: [-1, INT32_MAX],
  log_frequency: [0, UINT32_MAX],
};

const show = (v: unknown): string => {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
};

function parseInteger(key: keyof typeof RANGES, raw: unknown): number {
  const text = typeof raw === 'number' ? String(raw) : raw;
  if (typeof text !== 'string' || !/^\s*[+-]?\d+\s*$/.test(text)) {
    throw new InferError('INVALID_ARG', `Unable to parse '${key}', got: ${show(raw)}`);
  }
  const n = Number(text);
  const [min, max] = RANGES[key];
  if (key === 'trace_count' && n < min) {
    throw new InferError('INVALID_ARG', `Unable to parse '${key}'. Expecting value >= ${min}, got: ${show(raw)}`);
  }
  if (n < min || n > max) {
    throw new InferError('INVALID_ARG', `Unable to parse '${key}', value is out of range [ ${min}, ${max} ], got: ${show(raw)}`);
  }
  return n;
}

function parseLevels(values: readonly unknown[]): TraceLevel {
  let level: TraceLevel = LEVEL_OFF;
  for (const v of values) {
    if (v === 'OFF') {
      if (values.length !== 1) throw new InferError('INVALID_ARG', "Expect only one trace level 'OFF' is specified");
    } else if (v === 'TIMESTAMPS') level = { ...level, timestamps: true };
    else if (v === 'TENSORS') level = { ...level, tensors: true };
    else throw new InferError('INVALID_ARG', `invalid trace level ${show(v)} for 'trace_level' (expected OFF, TIMESTAMPS or TENSORS)`);
  }
  return level;
}

const FIELD_OF: Record<string, Field> = { trace_level: 'level', trace_rate: 'rate', trace_count: 'count', log_frequency: 'logFrequency' };

/**
 * The field a request key names, own keys only: a plain lookup found Object.prototype's members, so
 * `{"constructor": "5"}` failed 500 'function is not iterable' and `{"toString": null}` answered 200.
 */
function fieldOf(key: string): Field | undefined {
  return Object.hasOwn(FIELD_OF, key) ? FIELD_OF[key] : undefined;
}

function refuseUnknown(key: string): never {
  if (key === 'trace_file') throw new InferError('UNSUPPORTED', TRACE_FILE_UPDATE_MESSAGE);
  if (key === 'trace_mode') throw new InferError('UNSUPPORTED', 'trace mode can not be updated through network protocol (set it with --trace-config mode=<triton|opentelemetry>)');
  throw new InferError('INVALID_ARG', `unknown trace setting ${show(key)} (expected trace_level, trace_rate, trace_count or log_frequency)`);
}

/** An HTTP `POST .../trace/setting` body (Triton: trace_level a list, the others strings; null clears). */
export function parseHttpTraceUpdate(body: unknown): TraceUpdate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InferError('INVALID_ARG', 'trace setting request must be a JSON object');
  }
  const entries = Object.entries(body as Record<string, unknown>);
  // trace_file first, whatever else the request holds: it is never taken from the network.
  if (entries.some(([k]) => k === 'trace_file')) throw new InferError('UNSUPPORTED', TRACE_FILE_UPDATE_MESSAGE);
  const update: TraceUpdate = {};
  for (const [key, value] of entries) {
    const field = fieldOf(key);
    if (!field) refuseUnknown(key);
    if (value === null) {
      update[field] = null;
      continue;
    }
    if (field === 'level') {
      const list = Array.isArray(value) ? value : [value];
      if (list.length === 0) throw new InferError('INVALID_ARG', "expect a list of trace levels for 'trace_level'");
      update.level = parseLevels(list);
      continue;
    }
    const one = Array.isArray(value) && value.length === 1 ? value[0] : value;
    (update as Record<string, number>)[field] = parseInteger(key as keyof typeof RANGES, one);
  }
  return update;
}

/** A gRPC TraceSettingRequest's settings (an empty value list clears; one value for all but trace_level). */
export function parseGrpcTraceUpdate(settings: Readonly<Record<string, readonly string[]>>): TraceUpdate {
  if ('trace_file' in settings) throw new InferError('UNSUPPORTED', TRACE_FILE_UPDATE_MESSAGE);
  const update: TraceUpdate = {};
  for (const [key, values] of Object.entries(settings)) {
    const field = fieldOf(key);
    if (!field) refuseUnknown(key);
    if (values.length === 0) {
      update[field] = null;
      continue;
    }
    if (field === 'level') {
      update.level = parseLevels(values);
      continue;
    }
    if (values.length > 1) throw new InferError('INVALID_ARG', `expect only 1 value for '${key}'`);
    (update as Record<string, number>)[field] = parseInteger(key as keyof typeof RANGES, values[0]);
  }
  return update;
}

/** HTTP's shape of the reported settings: trace_level and resource stay lists, the rest are strings. */
export function httpTraceReport(report: Record<string, string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(report)) out[k] = k === 'trace_level' || k === 'resource' ? v : (v[0] ?? '');
  return out;
}
