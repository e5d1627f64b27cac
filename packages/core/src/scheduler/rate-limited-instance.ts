/**
 * A model instance behind the rate limiter: each execution first acquires the instance's resources
 * and releases them when the execute call returns (for a decoupled model, when its execute returns,
 * as Triton releases a payload's resources; responses sent after that hold nothing). Health and
 * counters read through to the instance; disposing it also unregisters it.
 */
import type { ExecuteContext, ExecuteOutput, ExecuteTimings, ModelInstance } from '../backend/spi.ts';
import type { InferRequest, ResponseSink } from '../types.ts';
import type { RateLimitedSlot } from './rate-limiter.ts';

export function rateLimitedInstance(instance: ModelInstance, slot: RateLimitedSlot): ModelInstance {
  const gated: ModelInstance = {
    get healthy() {
      return instance.healthy;
    },
    async execute(batch: readonly InferRequest[], signal: AbortSignal, context?: ExecuteContext): Promise<ExecuteOutput> {
      const release = await slot.acquire(signal);
      try {
        return await instance.execute(batch, signal, context);
      } finally {
        release();
      }
    },
    ...(instance.executeDecoupled
      ? {
          async executeDecoupled(batch: readonly InferRequest[], sinks: readonly ResponseSink[], signal: AbortSignal, context?: ExecuteContext): Promise<ExecuteTimings | void> {
            const release = await slot.acquire(signal);
            try {
              return await instance.executeDecoupled!(batch, sinks, signal, context);
            } finally {
              release();
            }
          },
        }
      : {}),
    async dispose(): Promise<void> {
      slot.unregister();
      await instance.dispose();
    },
  };
  return gated;
}
