import type { Backend } from '@tritium/core/backend';
import { exampleBackend, type ExampleBackendOptions } from '../example-backend.ts';
import { planGpuSim, type GpuSimInit } from './plan.ts';

/**
 * `gpu_sim`, a clearly named test double (not a Triton backend): a GPU-bound model on a host without a
 * GPU. Each execution waits `launch_us` (default 4000) + `per_row_us` (default 20) × rows on a timer and
 * answers zero-filled outputs, so batching pays off as it does on a GPU (bench case (f)).
 */
export function gpuSimBackend(options?: ExampleBackendOptions): Backend {
  return exampleBackend<GpuSimInit>({ name: 'gpu_sim', entry: new URL('./entry.ts', import.meta.url), plan: planGpuSim }, options);
}
