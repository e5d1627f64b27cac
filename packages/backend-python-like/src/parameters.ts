import { InferError, type ModelConfig } from '@tritium/core';

/**
 * The python-like backend's config `parameters` (all optional), e.g.
 * `parameters { key: "tritium.heap_mb" value: { string_value: "256" } }`:
 *
 * | key | meaning | default |
 * |---|---|---|
 * | `tritium.heap_mb` | V8 old-generation heap cap of each instance's worker, MiB | Node's default |
 * | `tritium.execute_timeout_ms` | an `execute` running longer is killed with its worker; its requests fail INTERNAL and the instance restarts | none |
 * | `tritium.isolation` | `thread` (worker thread) or `process` (child process under Node's permission model) | `thread` |
 * | `tritium.start_timeout_ms` | how long import + `initialize` may take | 60000 |
 * | `tritium.allow_addons` | `true`: process isolation may load native addons (e.g. onnxruntime-node, sharp); native code is outside the permission model | `false` |
 */
export interface SandboxParameters {
  readonly heapMb?: number;
  readonly executeTimeoutMs?: number;
  readonly isolation: 'thread' | 'process';
  readonly startTimeoutMs?: number;
  readonly allowAddons: boolean;
}

export const PARAMETER_KEYS = {
  heapMb: 'tritium.heap_mb',
  executeTimeoutMs: 'tritium.execute_timeout_ms',
  isolation: 'tritium.isolation',
  startTimeoutMs: 'tritium.start_timeout_ms',
  allowAddons: 'tritium.allow_addons',
} as const;

function positiveInt(config: ModelConfig, key: string): number | undefined {
  const raw = config.parameters?.[key]?.string_value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be a positive integer, got '${raw}'`);
  }
  return n;
}

/** Reads and validates the sandbox parameters; INVALID_ARG naming the key on a bad value. */
export function sandboxParameters(config: ModelConfig, defaults: { isolation?: 'thread' | 'process' } = {}): SandboxParameters {
  const isolationRaw = config.parameters?.[PARAMETER_KEYS.isolation]?.string_value?.trim();
  if (isolationRaw && isolationRaw !== 'thread' && isolationRaw !== 'process') {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.isolation}' must be 'thread' or 'process', got '${isolationRaw}'`,
    );
  }
  const addonsRaw = config.parameters?.[PARAMETER_KEYS.allowAddons]?.string_value?.trim().toLowerCase();
  if (addonsRaw && addonsRaw !== 'true' && addonsRaw !== 'false') {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.allowAddons}' must be 'true' or 'false', got '${addonsRaw}'`,
    );
  }
  return {
    allowAddons: addonsRaw === 'true',
    heapMb: positiveInt(config, PARAMETER_KEYS.heapMb),
    executeTimeoutMs: positiveInt(config, PARAMETER_KEYS.executeTimeoutMs),
    startTimeoutMs: positiveInt(config, PARAMETER_KEYS.startTimeoutMs),
    isolation: (isolationRaw as 'thread' | 'process' | undefined) || defaults.isolation || 'thread',
  };
}
