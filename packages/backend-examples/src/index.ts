/**
 * @tritium/backend-examples — Triton's example backends, which Triton's example repositories,
 * QA configs and client examples name: `identity`, `repeat` (decoupled) and `square` (decoupled),
 * and `gpu_sim`, a test double for a GPU-bound model (a timer per execution). `tritium serve` binds all four.
 *
 * @example
 * ```ts
 * import { exampleBackends } from '@tritium/backend-examples';
 * const server = new InferenceServer({ repositories: ['models'], backends: [...exampleBackends()] });
 * ```
 */
import type { Backend } from '@tritium/core/backend';
import type { ExampleBackendOptions } from './example-backend.ts';
import { identityBackend } from './identity/index.ts';
import { repeatBackend } from './repeat/index.ts';
import { squareBackend } from './square/index.ts';
import { gpuSimBackend } from './gpu-sim/index.ts';

export type { ExampleBackendOptions } from './example-backend.ts';
export { identityBackend, repeatBackend, squareBackend, gpuSimBackend };
export { IDENTITY_RESPONSE_PARAMETERS } from './identity/entry.ts';

/** The example backends, as `tritium serve` binds them. */
export function exampleBackends(options?: ExampleBackendOptions): Backend[] {
  return [identityBackend(options), repeatBackend(options), squareBackend(options), gpuSimBackend(options)];
}
