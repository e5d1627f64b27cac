/**
 * Triton's rate limiter (`--rate-limit execution_count`): model instances that list
 * `rate_limiter { resources [...] }` in their instance group run an execution only while they hold
 * those resources, so instances of different models sharing a named resource never execute together
 * beyond its count. Resources are per device unless `global`; their counts come from
 * `--rate-limit-resource <name>:<count>[:<device>]` or, when no such flag is given, the largest count
 * any loaded instance asks for (Triton's default, recomputed as models load and unload). Waiting
 * instances are served by Triton's scaled priority (executions so far × `priority`, 0 counting as 1;
 * lower first, then arrival), and one that cannot get its resources keeps the ones behind it waiting,
 * so a large request is not starved by small ones.
 *
 * Beyond Triton: an instance that lists no resources never waits here (it needs nothing another
 * instance could hold), so models without a rate_limiter keep their full speed under
 * `execution_count`.
 */
import { InferError } from '../errors.ts';
import type { ModelRateLimiter } from '../config/model-config.ts';
import { onAbort } from './abort-listeners.ts';

/** One `--rate-limit-resource` flag: `device` undefined = every device. */
export interface RateLimitResourceFlag {
  readonly name: string;
  readonly count: number;
  readonly device?: number;
}

/** Where a resource lives: one global pool, or one pool per device. */
type Pool = 'global' | number;

interface Need {
  readonly name: string;
  readonly pool: Pool;
  readonly count: number;
}

interface Waiter {
  readonly slot: RateLimitedSlot;
  readonly seq: number;
  readonly grant: () => void;
}

const poolKey = (name: string, pool: Pool): string => `${pool === 'global' ? 'G' : `D${pool}`}:${name}`;

/** One instance's registration: what it needs, its priority and executions so far. */
export class RateLimitedSlot {
  executions = 0;

  constructor(
    readonly limiter: RateLimiter,
    readonly label: string,
    readonly needs: readonly Need[],
    readonly priority: number,
  ) {}

  /** Waits until the instance holds its resources; call the returned function when its execution ends. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    return this.limiter.acquire(this, signal);
  }

  /** The instance is gone (its version unloaded): its needs no longer count toward default counts. */
  unregister(): void {
    this.limiter.unregister(this);
  }
}

export class RateLimiter {
  private readonly slots = new Set<RateLimitedSlot>();
  private readonly held = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  private seq = 0;

  constructor(private readonly explicit: readonly RateLimitResourceFlag[] = []) {}

  /**
   * Registers one instance (`label` names it in errors) of a model whose group has `config`.
   * Throws INVALID_ARG with Triton's messages when a resource is both global and per device, or when
   * an explicit count is below what the instance needs.
   */
  register(label: string, device: number, config: ModelRateLimiter | undefined): RateLimitedSlot {
    const needs = (config?.resources ?? [])
      .filter((r) => r.count > 0)
      .map((r): Need => ({ name: r.name, pool: r.global ? 'global' : device, count: r.count }));
    const slot = new RateLimitedSlot(this, label, needs, Math.max(1, config?.priority ?? 0));
    const all = [...this.slots, slot];
    for (const need of needs) {
      const clash = all.some((s) => s.needs.some((n) => n.name === need.name && (n.pool === 'global') !== (need.pool === 'global')));
      if (clash) {
        throw new InferError('INVALID_ARG', `Resource "${need.name}" is present as both global and device-specific resource in the model configuration.`);
      }
      if (this.explicit.length > 0) {
        const available = this.explicitCount(need);
        if (available < need.count) {
          throw new InferError(
            'INVALID_ARG',
            `Resource count for "${need.name}" is limited to ${available} which will prevent scheduling of one or more model instances, the minimum required count is ${need.count}`,
          );
        }
      }
    }
    this.slots.add(slot);
    this.dispatch();
    return slot;
  }

  /** How many copies of a resource exist: the explicit flags' count, else the largest need of a registered instance. */
  available(name: string, pool: Pool): number {
    if (this.explicit.length > 0) return this.explicitCount({ name, pool, count: 0 });
    let max = 0;
    for (const s of this.slots) for (const n of s.needs) if (n.name === name && n.pool === pool && n.count > max) max = n.count;
    return max;
  }

  /** Triton's ParseAndValidateExplicitResources: a global resource takes any flag of its name, a device one its device's or the all-devices flag. */
  private explicitCount(need: Need): number {
    let count = 0;
    for (const f of this.explicit) {
      if (f.name !== need.name) continue;
      if (need.pool === 'global' || f.device === undefined || f.device === need.pool) count = Math.max(count, f.count);
    }
    return count;
  }

  unregister(slot: RateLimitedSlot): void {
    this.slots.delete(slot);
    this.dispatch();
  }

  acquire(slot: RateLimitedSlot, signal?: AbortSignal): Promise<() => void> {
    if (slot.needs.length === 0) return Promise.resolve(() => undefined);
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        slot,
        seq: this.seq++,
        grant: () => {
          unlisten?.();
          resolve(() => this.release(slot));
        },
      };
      const unlisten =
        signal &&
        onAbort(signal, () => {
          const i = this.waiting.indexOf(waiter);
          if (i < 0) return;
          this.waiting.splice(i, 1);
          reject(cancelled());
          this.dispatch();
        });
      this.waiting.push(waiter);
      this.dispatch();
    });
  }

  /** What is held now, by resource (for tests and diagnostics). */
  holding(): ReadonlyMap<string, number> {
    return this.held;
  }

  private fits(slot: RateLimitedSlot): boolean {
    return slot.needs.every((n) => (this.held.get(poolKey(n.name, n.pool)) ?? 0) + n.count <= this.available(n.name, n.pool));
  }

  /** Grants waiting instances in scaled-priority order until the first that does not fit. */
  private dispatch(): void {
    while (this.waiting.length > 0) {
      this.waiting.sort((a, b) => a.slot.executions * a.slot.priority - b.slot.executions * b.slot.priority || a.seq - b.seq);
      const next = this.waiting[0]!;
      if (!this.fits(next.slot)) return;
      this.waiting.shift();
      for (const n of next.slot.needs) {
        const k = poolKey(n.name, n.pool);
        this.held.set(k, (this.held.get(k) ?? 0) + n.count);
      }
      next.slot.executions++;
      next.grant();
    }
  }

  private release(slot: RateLimitedSlot): void {
    for (const n of slot.needs) {
      const k = poolKey(n.name, n.pool);
      const left = (this.held.get(k) ?? 0) - n.count;
      if (left > 0) this.held.set(k, left);
      else this.held.delete(k);
    }
    this.dispatch();
  }
}

const cancelled = (): InferError => new InferError('CANCELLED', 'Request was cancelled while waiting for rate limiter resources');
