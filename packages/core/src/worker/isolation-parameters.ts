/**
 * The `tritium.*` config parameters every worker-hosted backend reads the same way (python-like and
 * onnxruntime): where an instance runs and what bounds it. One parser, so a key means one thing in
 * every backend and a server ceiling (ModelLimits) shapes every backend's defaults alike.
 *
 * | key | meaning | default |
 * |---|---|---|
 * | `tritium.isolation` | `thread` (worker thread) or `process` (sandboxed child process) | the backend's (`thread`) |
 * | `tritium.heap_mb` | V8 old-generation heap cap of each instance's worker, MiB | Node's default |
 * | `tritium.memory_mb` | process isolation: bound of the whole child process (heap, ArrayBuffers, native), MiB | 1024, or `heap_mb` + 256 when larger |
 * | `tritium.execute_timeout_ms` | an `execute` running longer is killed with its worker; its requests fail INTERNAL and the instance restarts | none |
 * | `tritium.execute_warn_ms` | an `execute` running longer is logged and counted in `tritium_execute_overrun_total` | 30000 |
 * | `tritium.start_timeout_ms` | how long starting an instance (import + initialize / session creation) may take | 60000 |
 *
 * Under a server ceiling (uploaded models, or all with `--model-limits=all`) the memory default
 * is at most the ceiling and a model that sets no execute timeout gets the ceiling's.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { ModelLimits } from '../server/model-limits.ts';
import type { WorkerInstanceOptions } from './types.ts';

export const ISOLATION_KEYS = {
  isolation: 'tritium.isolation',
  heapMb: 'tritium.heap_mb',
  memoryMb: 'tritium.memory_mb',
  executeTimeoutMs: 'tritium.execute_timeout_ms',
  executeWarnMs: 'tritium.execute_warn_ms',
  startTimeoutMs: 'tritium.start_timeout_ms',
} as const;

/** Default whole-process bound of a process-isolated instance, MiB (raised to heap_mb + MEMORY_MARGIN_MB). */
export const DEFAULT_MEMORY_MB = 1024;
const MEMORY_MARGIN_MB = 256;
/** The longest timer setTimeout honours (~24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export type Isolation = 'thread' | 'process';

export interface IsolationParameters {
  readonly isolation: Isolation;
  /** True when `forceProcess` overrode a thread isolation the config (or default) chose. */
  readonly isolationForced: boolean;
  readonly heapMb?: number;
  /** Whole-process bound under process isolation, MiB. */
  readonly memoryMb?: number;
  readonly executeTimeoutMs?: number;
  readonly executeWarnMs: number;
  readonly startTimeoutMs?: number;
}

export interface IsolationDefaults {
  /** Isolation when the config does not set `tritium.isolation` (default `thread`). */
  readonly isolation?: Isolation;
  /** `process` whatever the config says (a model whose files were uploaded through the load API). */
  readonly forceProcess?: boolean;
  /** The server's ceilings for this model, when they apply to it (LoadSpec.limits). */
  readonly limits?: ModelLimits;
}

/** A positive integer parameter, or undefined when unset; INVALID_ARG naming the key otherwise. */
export function positiveIntParameter(config: ModelConfig, key: string): number | undefined {
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
 * honours (a longer one fires at once: every execute would "time out" and the instance crash-loop).
 */
export function durationParameter(config: ModelConfig, key: string): number | undefined {
  const n = positiveIntParameter(config, key);
  if (n !== undefined && n > MAX_TIMER_MS) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be at most ${MAX_TIMER_MS} (ms), got '${n}'`);
  }
  return n;
}

/** `true` / `false` (default false); INVALID_ARG naming the key otherwise. */
export function boolParameter(config: ModelConfig, key: string): boolean {
  const raw = config.parameters?.[key]?.string_value?.trim().toLowerCase();
  if (raw && raw !== 'true' && raw !== 'false') {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be 'true' or 'false', got '${raw}'`);
  }
  return raw === 'true';
}

/** Reads and validates the isolation parameters; INVALID_ARG naming the key on a bad value. */
export function isolationParameters(config: ModelConfig, defaults: IsolationDefaults = {}): IsolationParameters {
  const K = ISOLATION_KEYS;
  const isolationRaw = config.parameters?.[K.isolation]?.string_value?.trim();
  if (isolationRaw && isolationRaw !== 'thread' && isolationRaw !== 'process') {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${K.isolation}' must be 'thread' or 'process', got '${isolationRaw}'`);
  }
  const chosen = (isolationRaw as Isolation | undefined) || defaults.isolation || 'thread';
  const isolation = defaults.forceProcess ? 'process' : chosen;
  const heapMb = positiveIntParameter(config, K.heapMb);
  let memoryMb = positiveIntParameter(config, K.memoryMb);
  if (memoryMb !== undefined && isolation !== 'process') {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${K.memoryMb}' needs '${K.isolation}: process' ` +
        `(a worker thread shares the server's memory; only '${K.heapMb}' applies to it)`,
    );
  }
  if (memoryMb !== undefined && heapMb !== undefined && memoryMb <= heapMb) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': parameter '${K.memoryMb}' (${memoryMb}) must be larger than '${K.heapMb}' (${heapMb}): it bounds the whole process, heap included`,
    );
  }
  const limits = defaults.limits;
  if (isolation === 'process' && memoryMb === undefined) {
    const wanted = Math.max(DEFAULT_MEMORY_MB, (heapMb ?? 0) + MEMORY_MARGIN_MB);
    memoryMb = limits ? Math.min(wanted, limits.memoryMb) : wanted;
  }
  const executeTimeoutMs = durationParameter(config, K.executeTimeoutMs) ?? limits?.executeTimeoutMs;
  const startTimeoutMs = durationParameter(config, K.startTimeoutMs);
  return {
    isolation,
    isolationForced: isolation !== chosen,
    ...(heapMb !== undefined ? { heapMb } : {}),
    ...(memoryMb !== undefined ? { memoryMb } : {}),
    ...(executeTimeoutMs !== undefined ? { executeTimeoutMs } : {}),
    executeWarnMs: durationParameter(config, K.executeWarnMs) ?? 30_000,
    ...(startTimeoutMs !== undefined ? { startTimeoutMs } : {}),
  };
}

/** The worker-host options these parameters set (heap cap, timeouts); isolation and sandbox are the backend's to add. */
export function workerBounds(p: IsolationParameters): Pick<WorkerInstanceOptions<unknown>, 'resourceLimits' | 'executeTimeoutMs' | 'executeWarnMs' | 'startTimeoutMs'> {
  return {
    ...(p.heapMb ? { resourceLimits: { maxOldGenerationSizeMb: p.heapMb } } : {}),
    ...(p.executeTimeoutMs ? { executeTimeoutMs: p.executeTimeoutMs } : {}),
    executeWarnMs: p.executeWarnMs,
    ...(p.startTimeoutMs ? { startTimeoutMs: p.startTimeoutMs } : {}),
  };
}
