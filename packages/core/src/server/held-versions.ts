/**
 * Every loaded model version that still holds something (instances, a scheduler draining), from the
 * moment its load returns until its instances are disposed: serving ones, and those being unloaded
 * (an unload, a reload's old version, a version the policy dropped). The server-wide instance
 * bounds count them all, so a version still draining keeps its workers counted; a stop tears them
 * all down.
 *
 * Unloads run here, in the background of model control: a version drains its requests for at most
 * `unloadTimeoutMs`, then what still runs is stopped (a process-isolated worker is killed); a worker
 * thread stuck in native code cannot be stopped, and is given up on after FORCED_DISPOSE_GRACE_MS
 * (it stays counted, since it still runs). No model-control operation waits on a drain, so one
 * model's stuck unload never holds another model's load.
 */
import type { Logger } from '../logger.ts';
import type { LoadedVersion } from './loaded-version.ts';
import { settlesWithin } from './settles-within.ts';

/** How long a stop or an overrun unload waits for forced teardown (the worker host kills a worker 2 s after asking it to exit). */
export const FORCED_DISPOSE_GRACE_MS = 3_000;

/** Unload bound when the server sets none (the default of Triton's --exit-timeout-secs). */
export const DEFAULT_UNLOAD_TIMEOUT_MS = 30_000;

interface Held {
  /** Bounded by the server's ModelLimits (counted against `processes`). */
  readonly bounded: boolean;
  /** Set once its unload began: resolves when it is gone (or given up on). */
  unloading?: Promise<void>;
}

export class HeldVersions {
  private readonly held = new Map<LoadedVersion, Held>();

  constructor(
    private readonly log: Logger,
    private readonly unloadTimeoutMs: number,
  ) {}

  /** Starts counting `version` (until its instances are disposed). */
  add(version: LoadedVersion, bounded: boolean): void {
    this.held.set(version, { bounded });
    void version.disposed.then(() => this.held.delete(version));
  }

  /** Instances of held versions; `boundedOnly` counts those of bounded models only. */
  instances(boundedOnly = false): number {
    let n = 0;
    for (const [version, h] of this.held) if (!boundedOnly || h.bounded) n += version.instances.length;
    return n;
  }

  /** Every version still held (a stop tears them down). */
  all(): LoadedVersion[] {
    return [...this.held.keys()];
  }

  /**
   * Unloads `version` in the background (once): drains, bounded by the unload timeout, then stops
   * what still runs. Resolves when it is gone, or given up on; never rejects.
   */
  retire(version: LoadedVersion): Promise<void> {
    const h = this.held.get(version);
    if (h?.unloading) return h.unloading;
    const unloading = this.unloadWithin(version);
    if (h) h.unloading = unloading;
    return unloading;
  }

  private async unloadWithin(version: LoadedVersion): Promise<void> {
    const label = `model '${version.name}' version ${version.version}`;
    if (await settlesWithin(version.unload(), this.unloadTimeoutMs)) return;
    this.log.warn(`${label} still busy ${this.unloadTimeoutMs} ms into its unload; stopping its instances`);
    if (!(await settlesWithin(version.forceDispose(), FORCED_DISPOSE_GRACE_MS))) {
      this.log.error(
        `${label} did not stop within ${FORCED_DISPOSE_GRACE_MS} ms of being stopped (a worker thread stuck in native code cannot be ` +
          `stopped; use 'tritium.isolation: process' to make it killable); it keeps its resources until the server exits`,
      );
    }
  }
}
