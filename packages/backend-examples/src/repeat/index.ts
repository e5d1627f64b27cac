import type { Backend } from '@tritium/core/backend';
import { exampleBackend, type ExampleBackendOptions } from '../example-backend.ts';
import { planRepeat, type RepeatInit } from './plan.ts';

/**
 * Triton's `repeat` backend (decoupled): IN = [v0..vn-1] gives n responses OUT = [ve], IDX = [e],
 * the e-th after DELAY[e] ms; the instance is released after WAIT ms.
 */
export function repeatBackend(options?: ExampleBackendOptions): Backend {
  return exampleBackend<RepeatInit>({ name: 'repeat', entry: new URL('./entry.ts', import.meta.url), plan: planRepeat }, options);
}
