/**
 * Log settings as Triton's `/v2/logging` exposes them; they drive the server's TritonLog. (Trace
 * settings live in tracing/trace-settings.ts.)
 */
import { InferError } from '@tritium/core';
import type { TritonLog } from '../logging/triton-log.ts';

export interface LogSettings {
  log_file: string;
  log_info: boolean;
  log_warning: boolean;
  log_error: boolean;
  log_verbose_level: number;
  log_format: string;
}

/**
 * Triton's answer (http_server.cc HandleLogging, grpc_server.cc OnExecuteLogging), UNSUPPORTED: the log
 * file is chosen by `--log-file` at start only. Letting a request pick it would let anyone who reaches
 * the port (a sandboxed model over loopback included) append to any file the server can write
 * (CVE-2024-0087).
 */
export const LOG_FILE_UPDATE_MESSAGE = 'log file location can not be updated through network protocol';

/** Triton keeps the verbose level in an int32; larger values are refused rather than wrapped. */
export const MAX_LOG_VERBOSE_LEVEL = 2147483647;

const LOG_KEYS: Record<keyof LogSettings, 'string' | 'boolean' | 'number'> = {
  log_file: 'string',
  log_info: 'boolean',
  log_warning: 'boolean',
  log_error: 'boolean',
  log_verbose_level: 'number',
  log_format: 'string',
};

const show = (v: unknown): string => {
  const text = typeof v === 'string' ? `'${v}'` : (JSON.stringify(v) ?? String(v));
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
};

/** Reads the live log settings of `log`. */
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

/**
 * Validates every change first, then applies them all (never half an update). A `null` value leaves
 * its setting as it is (Triton skips null fields). Any `log_file` value is refused as Triton does.
 */
export function updateLogSettings(log: TritonLog, changes: Record<string, unknown>): LogSettings {
  const kept = Object.entries(changes).filter(([, value]) => value !== null && value !== undefined);
  if (kept.some(([key]) => key === 'log_file')) throw new InferError('UNSUPPORTED', LOG_FILE_UPDATE_MESSAGE);
  for (const [key, value] of kept) {
    // Own keys only: Object.prototype's members ('constructor', '__proto__') are no settings either.
    const kind = Object.hasOwn(LOG_KEYS, key) ? LOG_KEYS[key as keyof LogSettings] : undefined;
    if (!kind) throw new InferError('INVALID_ARG', `Logging setting '${key}' is not a valid logging setting`);
    if (typeof value !== kind) {
      throw new InferError('INVALID_ARG', `expect a ${kind === 'number' ? 'uint32' : kind} value for logging setting '${key}', got ${show(value)}`);
    }
    if (key === 'log_verbose_level' && (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_LOG_VERBOSE_LEVEL)) {
      throw new InferError(
        'INVALID_ARG',
        `invalid value for logging setting 'log_verbose_level': ${show(value)} (expected an integer from 0 to ${MAX_LOG_VERBOSE_LEVEL})`,
      );
    }
    if (key === 'log_format' && value !== 'default' && value !== 'ISO8601') {
      throw new InferError('INVALID_ARG', `invalid argument for log_format, got: ${show(value)} (expected 'default' or 'ISO8601')`);
    }
  }
  const o = log.options;
  for (const [key, value] of kept) {
    if (key === 'log_info') o.info = value as boolean;
    if (key === 'log_warning') o.warning = value as boolean;
    if (key === 'log_error') o.error = value as boolean;
    if (key === 'log_verbose_level') o.verbose = value as number;
    if (key === 'log_format') o.format = value as 'default' | 'ISO8601';
  }
  return logSettingsOf(log);
}
