/**
 * Server-side ceilings on what a model's own config may ask for (beyond Triton). A config uploaded
 * through the load API chooses its own `tritium.memory_mb`, `tritium.heap_mb`, instance count and
 * execute timeout: `memory_mb: 1000000` with `count: 128` started 384 processes (+2.8 GB) and held
 * a neighbour's p99 at 16 s while they started. These ceilings apply to uploaded models, or to every
 * model when the operator asks (`scope: 'all'`); a config over one is refused at load, naming the
 * key, its value and the ceiling, before anything starts.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import { instancesPerVersion } from '../config/validate-instances.ts';
import { ISOLATION_KEYS, positiveIntParameter } from '../worker/isolation-parameters.ts';

export interface ModelLimits {
  /** Most `tritium.memory_mb` (whole-process bound of a process-isolated instance), MiB; also the default's cap. */
  readonly memoryMb: number;
  /** Most `tritium.heap_mb`, MiB. */
  readonly heapMb: number;
  /** Most instances of one model, all groups and versions together. */
  readonly instances: number;
  /** Most instances of bounded models in the server, all together (uploaded models run each as a sandboxed process). */
  readonly processes: number;
  /** Most `tritium.execute_timeout_ms`; a bounded model that sets none gets this one. */
  readonly executeTimeoutMs: number;
  /** Most `tritium.start_timeout_ms` (a load waits that long for an instance that never starts). */
  readonly startTimeoutMs: number;
  /** Which models the ceilings bound: those uploaded through the load API (default), or all. */
  readonly scope: 'uploaded' | 'all';
}

/** Conservative defaults for uploaded models (`tritium serve --model-max-*` changes them). */
export const DEFAULT_MODEL_LIMITS: ModelLimits = {
  memoryMb: 1024,
  heapMb: 512,
  instances: 4,
  processes: 16,
  executeTimeoutMs: 60_000,
  startTimeoutMs: 60_000,
  scope: 'uploaded',
};

/** Whether `limits` bound a model loaded from uploaded files (`uploaded`) or from a repository. */
export function limitsApply(limits: ModelLimits, uploaded: boolean): boolean {
  return uploaded || limits.scope === 'all';
}

function whom(limits: ModelLimits): string {
  return limits.scope === 'all' ? 'models' : 'uploaded models';
}

function refuse(config: ModelConfig, what: string, value: number, ceiling: number, limits: ModelLimits): never {
  throw new InferError('INVALID_ARG', `model '${config.name}': ${what} is ${value}, over the server's ceiling of ${ceiling} for ${whom(limits)}`);
}

/**
 * Refuses a config (all `versions` it loads together) that asks for more than `limits` allow; the
 * error names the key, its value and the ceiling. Keys the config leaves unset are within bounds.
 */
export function checkModelLimits(config: ModelConfig, versions: number, limits: ModelLimits): void {
  const memoryMb = positiveIntParameter(config, ISOLATION_KEYS.memoryMb);
  if (memoryMb !== undefined && memoryMb > limits.memoryMb) refuse(config, `parameter '${ISOLATION_KEYS.memoryMb}'`, memoryMb, limits.memoryMb, limits);
  const heapMb = positiveIntParameter(config, ISOLATION_KEYS.heapMb);
  if (heapMb !== undefined && heapMb > limits.heapMb) refuse(config, `parameter '${ISOLATION_KEYS.heapMb}'`, heapMb, limits.heapMb, limits);
  const executeMs = positiveIntParameter(config, ISOLATION_KEYS.executeTimeoutMs);
  if (executeMs !== undefined && executeMs > limits.executeTimeoutMs) {
    refuse(config, `parameter '${ISOLATION_KEYS.executeTimeoutMs}'`, executeMs, limits.executeTimeoutMs, limits);
  }
  const startMs = positiveIntParameter(config, ISOLATION_KEYS.startTimeoutMs);
  if (startMs !== undefined && startMs > limits.startTimeoutMs) {
    refuse(config, `parameter '${ISOLATION_KEYS.startTimeoutMs}'`, startMs, limits.startTimeoutMs, limits);
  }
  const instances = instancesPerVersion(config) * versions;
  if (instances > limits.instances) {
    refuse(config, `instance_group count (all groups${versions > 1 ? `, ${versions} versions` : ''})`, instances, limits.instances, limits);
  }
}

/** The server-wide ceiling: `loaded` instances of bounded models already hold processes, `count` more would start. */
export function checkProcessCeiling(model: string, count: number, loaded: number, limits: ModelLimits): void {
  if (count === 0 || loaded + count <= limits.processes) return;
  throw new InferError(
    'INVALID_ARG',
    `model '${model}': its ${count} instances beside the ${loaded} of ${whom(limits)} already in the server make ${loaded + count}, ` +
      `over the server's ceiling of ${limits.processes} instances (processes) for ${whom(limits)} together`,
  );
}
