import type { Backend } from '@tritium/core/backend';
import { exampleBackend, type ExampleBackendOptions } from '../example-backend.ts';
import { planSquare, type SquareInit } from './plan.ts';

/** Triton's `square` backend (decoupled): IN = [n] gives n responses, each OUT = [n]. */
export function squareBackend(options?: ExampleBackendOptions): Backend {
  return exampleBackend<SquareInit>({ name: 'square', entry: new URL('./entry.ts', import.meta.url), plan: planSquare }, options);
}
