import type { ExecuteContext, ModelInstance } from '../backend/spi.ts';
import type { CallCycleGuard } from './call-cycles.ts';

/** One instance of a batcher: it runs one batch at a time. */
export interface InstanceSlot {
  readonly instance: ModelInstance;
  busy: boolean;
  /** The context of an execution on this slot whose requests have no callers (most of them). */
  readonly context: ExecuteContext;
}

/** A batcher's instances, one slot each (its BLS call frame from `cycles`), and which runs the next batch. */
export class InstanceSlots {
  readonly all: readonly InstanceSlot[];

  constructor(instances: readonly ModelInstance[], cycles: CallCycleGuard) {
    this.all = instances.map((instance, i) => ({ instance, busy: false, context: { callers: [cycles.frames[i]!] } }));
  }

  /**
   * An idle instance for the next batch: a healthy one; a down one (crash loop) only when no instance
   * is healthy, busy or not — while a healthy instance is merely busy, the batch waits for it rather
   * than for a restart that may never come (or fail on the way).
   */
  idle(): InstanceSlot | undefined {
    let fallback: InstanceSlot | undefined;
    let anyHealthy = false;
    for (const s of this.all) {
      const healthy = s.instance.healthy !== false;
      anyHealthy ||= healthy;
      if (s.busy) continue;
      if (healthy) return s;
      fallback ??= s;
    }
    return anyHealthy ? undefined : fallback;
  }
}
