import type { Backend } from '@tritium/core/backend';
import { exampleBackend, type ExampleBackendOptions } from '../example-backend.ts';
import { planIdentity, type IdentityInit } from './plan.ts';

/**
 * Triton's `identity` backend: OUTPUT<i> = INPUT<i>, any datatype and shape, batching or not,
 * optional inputs, `execute_delay_ms` / `instance_wise_delay_multiplier` / `creation_delay_sec`.
 */
export function identityBackend(options?: ExampleBackendOptions): Backend {
  return exampleBackend<IdentityInit>(
    {
      name: 'identity',
      entry: new URL('./entry.ts', import.meta.url),
      plan: planIdentity,
      instanceInit: (init, instanceIndex) => ({ ...init, instanceIndex }),
    },
    options,
  );
}
