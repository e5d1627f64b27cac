/**
 * The server-wide instance bounds while versions load: MAX_INSTANCES_PER_SERVER over every model,
 * and `limits.processes` over the models the ceilings bound (client-sent configs). A version's
 * instances are reserved before it loads and counted by HeldVersions once it is held, so a draining
 * version counts until it is gone.
 */
import { InferError } from '../errors.ts';
import { MAX_INSTANCES_PER_SERVER } from '../config/validate-instances.ts';
import type { HeldVersions } from './held-versions.ts';
import { checkProcessCeiling, type ModelLimits } from './model-limits.ts';

export class InstanceReservations {
  /** Instances of versions being loaded now (not yet held). */
  private loading = 0;
  /** Of those, instances of models the ceilings bound. */
  private loadingBounded = 0;

  constructor(
    private readonly held: HeldVersions,
    private readonly limits: ModelLimits | undefined,
  ) {}

  /**
   * Takes `count` instances from the server-wide bounds for a version about to load, or throws
   * naming the bound. Synchronous, so loads running side by side cannot both pass the check.
   */
  reserve(model: string, count: number, bounded: boolean): void {
    const loaded = this.loading + this.held.instances();
    if (loaded + count > MAX_INSTANCES_PER_SERVER) {
      throw new InferError(
        'INVALID_ARG',
        `model ${model} would start ${count} instances beside the ${loaded} loaded in the server; at most ${MAX_INSTANCES_PER_SERVER} are allowed in all models together`,
      );
    }
    if (bounded && this.limits) checkProcessCeiling(model, count, this.loadingBounded + this.held.instances(true), this.limits);
    this.loading += count;
    if (bounded) this.loadingBounded += count;
  }

  /** Gives back a reservation once its version is held (or failed to load). */
  release(count: number, bounded: boolean): void {
    this.loading -= count;
    if (bounded) this.loadingBounded -= count;
  }
}
