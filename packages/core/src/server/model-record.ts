import type { ModelState } from './server-api.ts';
import type { ResolvedModel } from '../repository/model-repository.ts';
import type { LoadedVersion } from './loaded-version.ts';
import { modelKey } from '../repository/model-identifier.ts';

/** What the server knows about one version: its state, why, and the loaded version serving it. */
export interface VersionSlot {
  state: ModelState;
  reason: string;
  /** Serving version (READY), or the one being unloaded. A reload swaps it only once the new one is READY. */
  live?: LoadedVersion;
  /**
   * Set when an ensemble version was unloaded because a model it uses lost its last loaded
   * version (Triton unloads such ensembles); cleared when it loads again. Counts as unloaded for
   * readiness, and marks the ensemble to reload once its composing models are back.
   */
  dependencyUnloaded?: boolean;
  /**
   * Set while every instance of `live` is down (a crash loop; they keep restarting): the slot reads
   * UNAVAILABLE with the last crash cause, requests get that, and it turns READY again by itself
   * when an instance serves again. The version stays loaded meanwhile.
   */
  down?: boolean;
  /**
   * The model folder `live` was loaded from. A load-API upload folder is kept while any live
   * version was loaded from it: an instance that crashes restarts from those files.
   */
  dir?: string;
  /**
   * The stamps (version folder and model) of the files whose load failed last. Poll mode does not
   * try them again until they change (the failure was logged once already); cleared by a load.
   */
  failedStamp?: string;
}

/** What the server knows about one model: a name, within a namespace with `--model-namespacing`. */
export class ModelRecord {
  resolved?: ResolvedModel;
  readonly slots = new Map<number, VersionSlot>();
  /** Set when the model could not be read (no versions known); shown in the index with version ''. */
  error?: string;
  /** Loaded by name (startup list or load API), not only as an ensemble's composing model. */
  explicit = false;
  /**
   * Temp folders holding `file:` overrides from the load API: the one a load is trying and those
   * its live versions were loaded from (a failed reload keeps the old version, so its files stay).
   * Each goes once no live version uses it, and all go on unload.
   */
  readonly overrideDirs = new Set<string>();
  /**
   * In the repository as last read or loaded (Triton's global map of names): a name resolves among
   * present records only; an unload or a folder gone clears it.
   */
  present = true;
  /** `modelKey(namespace, name)`: the key the lifecycle holds it under. */
  readonly key: string;

  constructor(
    readonly name: string,
    readonly namespace = '',
  ) {
    this.key = modelKey(namespace, name);
  }

  readyVersions(): number[] {
    return [...this.slots.entries()]
      .filter(([, s]) => s.state === 'READY' && s.live)
      .map(([v]) => v)
      .sort((a, b) => a - b);
  }

  /** Versions loaded and serving, or loaded with every instance down for now (they recover by themselves). */
  servingVersions(): number[] {
    return [...this.slots.entries()]
      .filter(([, s]) => s.live && (s.state === 'READY' || s.down))
      .map(([v]) => v)
      .sort((a, b) => a - b);
  }

  /** The highest serving version (see `servingVersions`). */
  latestServing(): LoadedVersion | undefined {
    const v = this.servingVersions().at(-1);
    return v === undefined ? undefined : this.slots.get(v)!.live;
  }

  /** The highest READY version's loaded version, without allocating (the inference hot path). */
  latestReady(): LoadedVersion | undefined {
    let best = -Infinity;
    let live: LoadedVersion | undefined;
    for (const [v, slot] of this.slots) {
      if (v > best && slot.state === 'READY' && slot.live) {
        best = v;
        live = slot.live;
      }
    }
    return live;
  }

  /**
   * The highest version that is UNAVAILABLE for a reason other than an unload (its load failed, an
   * instance gave up, an ensemble lost a composing model), with that reason.
   */
  failedVersion(): { version: number; reason: string } | undefined {
    let found: { version: number; reason: string } | undefined;
    for (const [version, s] of this.slots) {
      if (s.state === 'UNAVAILABLE' && s.reason && s.reason !== 'unloaded' && (!found || version > found.version)) found = { version, reason: s.reason };
    }
    return found;
  }

  /** The message of the most recent failed version load, if any. */
  loadError(): string | undefined {
    for (const s of this.slots.values()) if (s.state === 'UNAVAILABLE' && s.reason && s.reason !== 'unloaded') return s.reason;
    return this.error;
  }
}
