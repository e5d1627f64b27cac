import { InferError, type ModelConfig } from '@tritium/core';

/**
 * The python-like backend's config `parameters` (all optional), e.g.
 * `parameters { key: "tritium.heap_mb" value: { string_value: "256" } }`:
 *
 * | key | meaning | default |
 * |---|---|---|
 * | `tritium.heap_mb` | V8 old-generation heap cap of each instance's worker, MiB | Node's default |
 * | `tritium.execute_timeout_ms` | an `execute` running longer is killed with its worker; its requests fail INTERNAL and the instance restarts | none |
 * | `tritium.execute_warn_ms` | an `execute` running longer is logged (model, instance, elapsed) and counted in `tritium_execute_overrun_total` | 30000 |
 * | `tritium.isolation` | `thread` (worker thread) or `process` (sandboxed child process) | `thread` |
 * | `tritium.start_timeout_ms` | how long import + `initialize` may take | 60000 |
 * | `tritium.allow_addons` | `true`: process isolation may load native addons (e.g. onnxruntime-node, sharp); native code is outside the permission model | `false` |
 * | `tritium.env` | process isolation: comma-separated names of the server's environment variables the child sees | none |
 * | `tritium.allow_network` | process isolation: `true` keeps the network (no network namespace) | `false` |
 * | `tritium.memory_mb` | process isolation: bound of the whole child process (heap, ArrayBuffers, native), MiB | 1024, or `heap_mb` + 256 when larger |
 */
export interface SandboxParameters {
  readonly heapMb?: number;
  readonly executeTimeoutMs?: number;
  readonly executeWarnMs: number;
  readonly isolation: 'thread' | 'process';
  /** True when `forceProcess` overrode a thread isolation the config (or default) chose. */
  readonly isolationForced: boolean;
  readonly startTimeoutMs?: number;
  readonly allowAddons: boolean;
  /** Names of the environment variables a process-isolated instance sees. */
  readonly env: readonly string[];
  readonly allowNetwork: boolean;
  /** Whole-process bound under process isolation, MiB. */
  readonly memoryMb?: number;
}

export const PARAMETER_KEYS = {
  heapMb: 'tritium.heap_mb',
  executeTimeoutMs: 'tritium.execute_timeout_ms',
  executeWarnMs: 'tritium.execute_warn_ms',
  isolation: 'tritium.isolation',
  startTimeoutMs: 'tritium.start_timeout_ms',
  allowAddons: 'tritium.allow_addons',
  env: 'tritium.env',
  allowNetwork: 'tritium.allow_network',
  memoryMb: 'tritium.memory_mb',
} as const;

/** Default whole-process bound of a process-isolated instance, MiB (raised to heap_mb + this margin). */
export const DEFAULT_MEMORY_MB = 1024;
const MEMORY_MARGIN_MB = 256;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables that change how the sandboxed child itself starts (Node flags such as --allow-fs-write, the dynamic loader, the IPC channel). */
const SANDBOX_ENV = /^(NODE_OPTIONS|NODE_CHANNEL_\w*|NODE_UNIQUE_ID|LD_\w*)$/;

function positiveInt(config: ModelConfig, key: string): number | undefined {
  const raw = config.parameters?.[key]?.string_value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be a positive integer, got '${raw}'`);
  }
  return n;
}

/**
 * A timer's length in ms: a positive integer up to 2^31-1 (~24.8 days), the longest setTimeout
 * honours; a longer one used to fire at once, so every execute "timed out" and the instance crash-looped.
 */
function durationMs(config: ModelConfig, key: string): number | undefined {
  const n = positiveInt(config, key);
  if (n !== undefined && n > 2 ** 31 - 1) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be at most 2147483647 (ms), got '${n}'`);
  }
  return n;
}

function bool(config: ModelConfig, key: string): boolean {
  const raw = config.parameters?.[key]?.string_value?.trim().toLowerCase();
  if (raw && raw !== 'true' && raw !== 'false') {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be 'true' or 'false', got '${raw}'`);
  }
  return raw === 'true';
}

function envNames(config: ModelConfig): string[] {
  const raw = config.parameters?.[PARAMETER_KEYS.env]?.string_value ?? '';
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = names.find((n) => !ENV_NAME.test(n));
  if (bad !== undefined) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.env}' must be a comma-separated list of environment variable names, got '${bad}'`,
    );
  }
  const unsafe = names.find((n) => SANDBOX_ENV.test(n));
  if (unsafe !== undefined) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.env}' may not pass '${unsafe}': it changes how the sandboxed process starts`,
    );
  }
  return [...new Set(names)];
}

/**
 * Reads and validates the sandbox parameters; INVALID_ARG naming the key on a bad value.
 * `forceProcess` (the model's files were uploaded through the load API) makes the isolation
 * `process` whatever the config says.
 */
export function sandboxParameters(
  config: ModelConfig,
  defaults: { isolation?: 'thread' | 'process'; forceProcess?: boolean } = {},
): SandboxParameters {
  const isolationRaw = config.parameters?.[PARAMETER_KEYS.isolation]?.string_value?.trim();
  if (isolationRaw && isolationRaw !== 'thread' && isolationRaw !== 'process') {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.isolation}' must be 'thread' or 'process', got '${isolationRaw}'`,
    );
  }
  const chosen = (isolationRaw as 'thread' | 'process' | undefined) || defaults.isolation || 'thread';
  const isolation = defaults.forceProcess ? 'process' : chosen;
  const heapMb = positiveInt(config, PARAMETER_KEYS.heapMb);
  let memoryMb = positiveInt(config, PARAMETER_KEYS.memoryMb);
  if (memoryMb !== undefined && isolation !== 'process') {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.memoryMb}' needs '${PARAMETER_KEYS.isolation}: process' ` +
        `(a worker thread shares the server's memory; only '${PARAMETER_KEYS.heapMb}' applies to it)`,
    );
  }
  if (memoryMb !== undefined && heapMb !== undefined && memoryMb <= heapMb) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${PARAMETER_KEYS.memoryMb}' (${memoryMb}) must be larger than '${PARAMETER_KEYS.heapMb}' (${heapMb}): it bounds the whole process, heap included`,
    );
  }
  if (isolation === 'process') memoryMb ??= Math.max(DEFAULT_MEMORY_MB, (heapMb ?? 0) + MEMORY_MARGIN_MB);
  const env = envNames(config);
  const allowNetwork = bool(config, PARAMETER_KEYS.allowNetwork);
  const allowAddons = bool(config, PARAMETER_KEYS.allowAddons);
  if (defaults.forceProcess) {
    // Uploaded code is untrusted: its own config may not widen the sandbox it is forced into.
    const widening = [
      env.length > 0 ? PARAMETER_KEYS.env : undefined,
      allowNetwork ? PARAMETER_KEYS.allowNetwork : undefined,
      allowAddons ? PARAMETER_KEYS.allowAddons : undefined,
    ].filter((k) => k !== undefined);
    if (widening.length > 0) {
      throw new InferError(
        'INVALID_ARG',
        `model '${config.name}': parameter '${widening[0]}' is refused for a model whose files were uploaded through the load API ` +
          `(its code runs in the process sandbox, which its own config may not widen)`,
      );
    }
  }
  return {
    allowAddons,
    heapMb,
    executeTimeoutMs: durationMs(config, PARAMETER_KEYS.executeTimeoutMs),
    executeWarnMs: durationMs(config, PARAMETER_KEYS.executeWarnMs) ?? 30_000,
    startTimeoutMs: durationMs(config, PARAMETER_KEYS.startTimeoutMs),
    isolation,
    isolationForced: isolation !== chosen,
    env,
    allowNetwork,
    ...(memoryMb !== undefined ? { memoryMb } : {}),
  };
}
