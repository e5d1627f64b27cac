/**
 * Direct scheduling (a model without `dynamic_batching`): each execution carries exactly one
 * request, in arrival order, one in flight per instance, every instance used. It is the batcher
 * with batching switched off, so cancellation, statistics and draining behave identically.
 */
import type { ModelConfig } from '../config/model-config.ts';
import { batcherOptionsFromConfig } from './batcher-options.ts';
import { DynamicBatcher, type BatcherDeps } from './dynamic-batcher.ts';

/** Creates the direct scheduler for `config` (its `dynamic_batching`, if any, is ignored). */
export function createDirectScheduler(config: ModelConfig, version: number, deps: BatcherDeps): DynamicBatcher {
  return new DynamicBatcher(batcherOptionsFromConfig(config, version, false), deps);
}
