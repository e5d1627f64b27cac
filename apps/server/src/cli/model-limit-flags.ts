/**
 * `tritium serve`'s flags for what models may cost the server (beyond Triton, except
 * --model-load-thread-count): the ceilings on what a config sent through the load API may ask for
 * (or every model's, with --model-limits=all), how long an unload may drain, and how many instances
 * start at once. Their defaults are core's.
 */
import { DEFAULT_MODEL_LIMITS, type ModelLimits } from '@tritium/core/server';

export interface ModelLimitOptions {
  /** `--model-max-*` and `--model-limits`: core's ModelLimits. */
  modelLimits: ModelLimits;
  /** `--model-unload-timeout-secs` (30): an unloading version drains at most this long, then is stopped. */
  modelUnloadTimeoutSecs: number;
  /** `--model-load-thread-count` (Triton's, 4): instances starting at once, all models together. */
  modelLoadThreadCount: number;
}

export function defaultModelLimitOptions(): ModelLimitOptions {
  return { modelLimits: { ...DEFAULT_MODEL_LIMITS }, modelUnloadTimeoutSecs: 30, modelLoadThreadCount: 4 };
}

type Int = (flag: string, value: string, min?: number) => number;
type Fail = (message: string) => never;

/** The setters of these flags, for flags.ts's table (`int` parses and names the flag on a bad value). */
export function modelLimitFlags(int: Int, fail: Fail): Record<string, (o: ModelLimitOptions, v: string) => void> {
  const limit = (key: Exclude<keyof ModelLimits, 'scope'>, flag: string) => (o: ModelLimitOptions, v: string) => {
    o.modelLimits = { ...o.modelLimits, [key]: int(flag, v, 1) };
  };
  /** A timer's length in ms: setTimeout honours at most 2^31-1. */
  const timer = (flag: string, v: string): number => {
    const ms = int(flag, v, 1);
    if (ms > 2 ** 31 - 1) fail(`invalid value for --${flag}: '${v}' (expected at most 2147483647)`);
    return ms;
  };
  return {
    'model-max-memory-mb': limit('memoryMb', 'model-max-memory-mb'),
    'model-max-heap-mb': limit('heapMb', 'model-max-heap-mb'),
    'model-max-instances': limit('instances', 'model-max-instances'),
    'model-max-processes': limit('processes', 'model-max-processes'),
    'model-max-execute-ms': (o, v) => (o.modelLimits = { ...o.modelLimits, executeTimeoutMs: timer('model-max-execute-ms', v) }),
    'model-max-start-ms': (o, v) => (o.modelLimits = { ...o.modelLimits, startTimeoutMs: timer('model-max-start-ms', v) }),
    'model-limits': (o, v) => {
      if (v !== 'uploaded' && v !== 'all') fail(`invalid value for --model-limits: '${v}' (expected uploaded or all)`);
      o.modelLimits = { ...o.modelLimits, scope: v as ModelLimits['scope'] };
    },
    'model-unload-timeout-secs': (o, v) => (o.modelUnloadTimeoutSecs = int('model-unload-timeout-secs', v, 1)),
    'model-load-thread-count': (o, v) => (o.modelLoadThreadCount = int('model-load-thread-count', v, 1)),
  };
}

/** The ceilings must leave room for a process's heap: memory_mb bounds the whole process, heap included. */
export function checkModelLimitOptions(o: ModelLimitOptions, fail: Fail): void {
  const { memoryMb, heapMb } = o.modelLimits;
  if (memoryMb <= heapMb) {
    fail(`--model-max-memory-mb (${memoryMb}) must be larger than --model-max-heap-mb (${heapMb}): it bounds the whole process, heap included`);
  }
}

export const MODEL_LIMIT_USAGE = `  --model-max-memory-mb <n> (1024)  --model-max-heap-mb <n> (512)  --model-max-instances <n> (4)
  --model-max-processes <n> (16)  --model-max-execute-ms <n> (60000)  --model-max-start-ms <n> (60000)
                                            ceilings on what a config sent through the load API may ask for: tritium.memory_mb,
                                            tritium.heap_mb, instances of the model, instances of such models in the server,
                                            tritium.execute_timeout_ms (also its default), tritium.start_timeout_ms; over one:
                                            refused 400 naming it
  --model-limits uploaded|all (uploaded)    apply those ceilings to every model, repository ones too
  --model-unload-timeout-secs <n> (30)      an unloading model drains at most this long, then its instances are stopped
  --model-load-thread-count <n> (4)         instances starting at once, all models together
`;
