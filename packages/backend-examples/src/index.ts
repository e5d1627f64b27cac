/**
 * @tritium/backend-examples — Triton's example backends, which Triton's example repositories,
 * QA configs and client examples name: `identity`, `repeat` (decoupled) and `square` (decoupled).
 * `tritium serve` binds all three.
 *
 * @example
 * ```ts
 * import { exampleBackends } from '@tritium/backend-examples';
 * const server = new InferenceServer({ repositories: ['models'], backends: [...exampleBackends()] });
 * ```
 */
import type { Backend } from '@tritium/core';
import type { ExampleBackendOptions } from './example-backend.ts';
import { identityBackend } from './identity/index.ts';
import { repeatBackend } from './repeat/index.ts';
import { squareBackend } from './square/index.ts';

export type { ExampleBackendOptions } from './example-backend.ts';
export { identityBackend, repeatBackend, squareBackend };
export { IDENTITY_RESPONSE_PARAMETERS } from './identity/entry.ts';

/** The three example backends, as `tritium serve` binds them. */
export function exampleBackends(options?: ExampleBackendOptions): Backend[] {
  return [identityBackend(options), repeatBackend(options), squareBackend(options)];
}
