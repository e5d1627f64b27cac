/**
 * One loaded model version: its completed config, backend model, instances and scheduler.
 * Created by `loadVersion`, torn down by `unload()` (drain the scheduler, dispose instances, then
 * the backend model), as Triton's model lifecycle does.
 */
import type { ModelConfig } from '../config/model-config.ts';
import type { BackendModel, InstanceSpec, ModelInstance } from '../backend/spi.ts';
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { ModelStats } from './model-stats.ts';

export class LoadedVersion {
  private unloading: Promise<void> | undefined;
  private markDisposed!: () => void;
  /** Resolves once its instances and model are disposed (by `unload` or `forceDispose`). */
  readonly disposed = new Promise<void>((resolve) => (this.markDisposed = resolve));
  /**
   * The model's namespace with `--model-namespacing` (its repository), '' without: an ensemble's
   * steps resolve in it first. Set by the loader before the version serves.
   */
  namespace = '';

  constructor(
    readonly name: string,
    readonly version: number,
    readonly config: ModelConfig,
    readonly stamp: string,
    readonly scheduler: Scheduler,
    readonly instances: readonly { readonly spec: InstanceSpec; readonly instance: ModelInstance }[],
    readonly backendModel: BackendModel | undefined,
    readonly stats: ModelStats,
    /**
     * The instances as the scheduler sees them when they are wrapped (rate limiter); disposing the
     * version disposes these, which dispose the instances above.
     */
    private readonly scheduled?: readonly ModelInstance[],
  ) {}

  /**
   * Releases instances and the model now, without waiting for in-flight requests (they fail):
   * shutdown after its drain timeout.
   */
  async forceDispose(): Promise<void> {
    this.scheduler.stop().catch(() => undefined);
    await this.disposeOnce();
  }

  private disposing: Promise<void> | undefined;

  /** Instances and model are disposed exactly once, whichever of unload/forceDispose gets there first. */
  private disposeOnce(): Promise<void> {
    this.disposing ??= disposeAll(this.scheduled ?? this.instances.map((i) => i.instance), this.backendModel).finally(() => this.markDisposed());
    return this.disposing;
  }

  /** Stops accepting work, waits for in-flight requests, releases instances and the model. Idempotent. */
  unload(): Promise<void> {
    this.unloading ??= (async () => {
      await this.scheduler.stop();
      await this.disposeOnce();
    })();
    return this.unloading;
  }
}

/** Disposes instances then the model; errors are swallowed so one bad instance cannot block shutdown. */
export async function disposeAll(instances: readonly ModelInstance[], model: BackendModel | undefined): Promise<void> {
  await Promise.allSettled(instances.map((i) => i.dispose()));
  if (model) await model.dispose().catch(() => undefined);
}
