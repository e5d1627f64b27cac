/**
 * Trace and log settings as Triton's `/v2/trace/setting` and `/v2/logging` expose them. Trace
 * settings are kept (globally and per model) and reported back; Tritium records no traces yet.
 * Log settings drive the server's TritonLog.
 */
import { InferError } from '@tritium/core';
import type { TritonLog } from '../logging/triton-log.ts';

export type TraceSettings = Record<string, string[]>;

const TRACE_DEFAULTS: TraceSettings = {
  trace_file: [''],
  trace_level: ['OFF'],
  trace_rate: ['1000'],
  trace_count: ['-1'],
  log_frequency: ['0'],
  trace_mode: ['triton'],
};

export class TraceSettingsStore {
  private readonly global: TraceSettings = structuredClone(TRACE_DEFAULTS);
  private readonly perModel = new Map<string, TraceSettings>();

  get(model?: string): TraceSettings {
    return { ...this.global, ...(model ? (this.perModel.get(model) ?? {}) : {}) };
  }

  /** Updates settings; a `null` value resets the key (to the global value for a model, the default globally). */
  update(changes: Record<string, string[] | null>, model?: string): TraceSettings {
    for (const [key, value] of Object.entries(changes)) {
      if (!(key in TRACE_DEFAULTS)) throw new InferError('INVALID_ARG', `unknown trace setting '${key}'`);
      if (value !== null && (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))) {
        throw new InferError('INVALID_ARG', `trace setting '${key}' must be a list of strings or null`);
      }
    }
    const target = model ? (this.perModel.get(model) ?? {}) : this.global;
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) {
        if (model) delete target[key];
        else target[key] = [...TRACE_DEFAULTS[key]!];
      } else target[key] = [...value];
    }
    if (model) this.perModel.set(model, target);
    return this.get(model);
  }
}

export interface LogSettings {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: string;
}

const LOG_KEYS: Record<keyof LogSettings, 'string' | 'boolean' | 'number'> = {
  log_file: 'string',
  log_info: 'boolean',
  log_warning: 'boolean',
  log_error: 'boolean',
  log_verbose_level: 'number',
  log_format: 'string',
};

/** Reads and updates the live log settings of `log`. */
export function logSettingsOf(log: TritonLog): LogSettings {
  const o = log.options;
  return {
    log_file: o.file ?? '',
    log_info: o.info,
    log_warning: o.warning,
    log_error: o.error,
    log_verbose_level: o.verbose,
    log_format: o.format,
  };
}

export function updateLogSettings(log: TritonLog, changes: Record<string, unknown>): LogSettings {
  for (const [key, value] of Object.entries(changes)) {
    const kind = LOG_KEYS[key as keyof LogSettings];
    if (!kind) throw new InferError('INVALID_ARG', `Logging setting '${key}' is not a valid logging setting`);
    if (typeof value !== kind || (kind === 'number' && (!Number.isInteger(value) || (value as number) < 0))) {
      throw new InferError('INVALID_ARG', `expect a ${kind === 'number' ? 'uint32' : kind} value for logging setting '${key}'`);
    }
    if (key === 'log_format' && value !== 'default' && value !== 'ISO8601') {
      throw new InferError('INVALID_ARG', `invalid argument for log_format, got: ${String(value)}`);
    }
  }
  const o = log.options;
  for (const [key, value] of Object.entries(changes)) {
    if (key === 'log_file') log.setFile((value as string) || undefined);
    if (key === 'log_info') o.info = value as boolean;
    if (key === 'log_warning') o.warning = value as boolean;
    if (key === 'log_error') o.error = value as boolean;
    if (key === 'log_verbose_level') o.verbose = value as number;
    if (key === 'log_format') o.format = value as 'default' | 'ISO8601';
  }
  return logSettingsOf(log);
}
