/**
 * The server's model lifecycle: the work of reading, loading, reloading and unloading models
 * (composing models before their ensembles; a changed version loads beside the serving one and is
 * swapped in only when READY). Callers serialize operations; inference only reads the records
 * (model-registry.ts). An unload changes states at once and drains in the background
 * (held-versions.ts, version-unload.ts): no operation waits on another model's drain. Applying one
 * model's versions is model-apply.ts; the instance bounds while loading, instance-reservations.ts.
 */
import { readFile } from 'node:fs/promises';
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { ModelRepository, ModelSource, ResolvedModel } from '../repository/model-repository.ts';
import type { ConfigCodec } from '../repository/config-codec.ts';
import { assertSafeModelName } from '../repository/model-name.ts';
import { modelIdText, modelKey } from '../repository/model-identifier.ts';
import { composingModels, findCycle, type DependencyNode } from '../ensemble/validate/ensemble-dependencies.ts';
import type { LoadOptions } from './server-api.ts';
import type { ModelRecord } from './model-record.ts';
import { ModelRegistry } from './model-registry.ts';
import { EnsembleStats, ModelStats } from './model-stats.ts';
import { prepareLoadOverride, type LoadOverride } from './load-overrides.ts';
import type { LatencyMetricsOptions } from '../metrics/latency-metrics.ts';
import { HeldVersions, DEFAULT_UNLOAD_TIMEOUT_MS } from './held-versions.ts';
import { InstanceReservations } from './instance-reservations.ts';
import { applyModel, type ApplyContext, type ApplyDeps } from './model-apply.ts';
import { removeUploads, unloadSlots } from './version-unload.ts';

export interface ModelLifecycleDeps extends ApplyDeps {
  readonly repository: ModelRepository;
  readonly codec: ConfigCodec;
  readonly allowModelFileOverride: boolean;
  /** `--metrics-config` summaries and first-response histogram. */
  readonly latencyMetrics?: LatencyMetricsOptions;
  /** How long an unloading version may drain its requests before what still runs is stopped (default 30 s). */
  readonly unloadTimeoutMs?: number;
  /** `--model-namespacing`: records are per repository and names resolve as in `resolve`. */
  readonly namespacing?: boolean;
}

export class ModelLifecycle extends ModelRegistry {
  private readonly stats = new Map<string, ModelStats>();
  /** Every loaded version not yet disposed (serving or draining), for the instance bounds and the stop. */
  readonly held: HeldVersions;
  private readonly apply: ApplyContext;

  constructor(private readonly deps: ModelLifecycleDeps) {
    super(deps.namespacing === true);
    this.held = new HeldVersions(deps.log, deps.unloadTimeoutMs ?? DEFAULT_UNLOAD_TIMEOUT_MS);
    this.apply = {
      deps,
      registry: this,
      held: this.held,
      reservations: new InstanceReservations(this.held, deps.limits),
      statsFor: (record, version, config) => this.statsFor(record, version, config),
    };
  }

  statsFor(record: { readonly key: string; readonly name: string }, version: number, config: ModelConfig): ModelStats {
    const name = record.name;
    const key = `${record.key}\0${version}`;
    let s = this.stats.get(key);
    if (!s) {
      // Triton's model_metrics: custom buckets for nv_inference_first_response_histogram_ms.
      const buckets = config.model_metrics?.metric_control?.find((c) => c.metric_identifier?.family === 'nv_inference_first_response_histogram_ms')
        ?.histogram_options?.buckets;
      const latency = { ...this.deps.latencyMetrics, ...(buckets && buckets.length > 0 ? { firstResponseBuckets: buckets.map(Number) } : {}) };
      const Stats = config.platform === 'ensemble' ? EnsembleStats : ModelStats;
      s = new Stats(name, String(version), Date.now, latency);
      this.stats.set(key, s);
    }
    return s;
  }

  /**
   * Unloads every version of `record` and, once they are gone, the upload folders they used. The
   * states change now (UNLOADING, no new requests); the promise resolves once they drained (bounded
   * by the unload timeout). Model control does not wait for it.
   */
  unloadRecord(record: ModelRecord): Promise<void> {
    const dirs = new Set(record.overrideDirs);
    return unloadSlots(record, this.held, this.deps.log).then(() =>
      // A load that came meanwhile may use a new upload folder, or (a reload) one of these. Nobody
      // may be waiting for this (a poll does not): a folder that cannot be removed is logged.
      removeUploads(record, (dir) => dirs.has(dir) && ![...record.slots.values()].some((slot) => slot.live && slot.dir === dir)).catch((err: unknown) =>
        this.deps.log.error(`model '${record.name}': could not remove its uploaded files: ${InferError.from(err).message}`),
      ),
    );
  }

  /**
   * Triton's dependency re-check after models lost their versions: an ensemble serving now whose
   * composing model has no loaded version (or lacks a pinned one) is unloaded, with the reason
   * naming that model (`ensemble 'E' depends on 'M' which has no loaded version.`). Repeats so
   * ensembles of ensembles follow. Returns the reasons, one line per unloaded ensemble, and the
   * drain of those ensembles (which model control does not wait for).
   */
  unloadBrokenEnsembles(): { lines: string[]; drained: Promise<void> } {
    const lines: string[] = [];
    const drains: Promise<void>[] = [];
    for (let changed = true; changed; ) {
      changed = false;
      for (const record of this.models.values()) {
        const config = record.resolved?.config;
        if (config?.platform !== 'ensemble' || record.readyVersions().length === 0) continue;
        const problem = this.composingProblem(config, record.namespace);
        if (problem === undefined) continue;
        drains.push(unloadSlots(record, this.held, this.deps.log, problem));
        this.deps.log.error(problem);
        lines.push(problem);
        changed = true;
      }
    }
    return { lines, drained: Promise.all(drains).then(() => undefined) };
  }

  /**
   * Ensembles unloaded by `unloadBrokenEnsembles` whose composing models are all serving again are
   * loaded again (Triton re-checks an ensemble's node when a model it uses is added back).
   * Returns failure lines.
   */
  async reloadRestoredEnsembles(): Promise<string[]> {
    const failures: string[] = [];
    for (let changed = true; changed; ) {
      changed = false;
      for (const record of this.models.values()) {
        const model = record.resolved;
        if (!model || ![...record.slots.values()].some((s) => s.dependencyUnloaded && !s.live)) continue;
        if (this.composingProblem(model.config, record.namespace) !== undefined) continue;
        failures.push(...(await applyModel(this.apply, model, undefined, false)));
        for (const slot of record.slots.values()) slot.dependencyUnloaded = false;
        // A reloaded ensemble may be what an outer ensemble was waiting for.
        if (record.readyVersions().length > 0) changed = true;
      }
    }
    return failures;
  }

  /** Full scan (startup in none/poll mode, `*` in explicit mode, every poll). Returns failure lines. */
  async syncWithRepository(startup: boolean): Promise<string[]> {
    const scan = await this.deps.repository.scan();
    // A repository that cannot be read fails the poll as a whole: nothing is unloaded because
    // its models seem gone (Triton's Poll returns the error before comparing anything).
    if (scan.errors.length > 0) return [...scan.errors];
    const failures: string[] = [];
    for (const name of scan.duplicates) {
      // Duplicates exist only without namespacing, where a key is the name.
      failures.push(`failed to poll model '${name}': not unique across all model repositories`);
      this.deps.onFailure?.(name, new InferError('INVALID_ARG', 'not unique across all model repositories'));
      const record = this.models.get(name);
      if (record) void this.unloadRecord(record);
    }
    if (!startup) {
      // Models whose folder disappeared are unloaded.
      for (const record of this.models.values()) {
        if (scan.models.has(record.key) || scan.duplicates.has(record.key) || record.overrideDirs.size > 0) continue;
        // Gone from the repository: no longer a candidate for its name (Triton removes its node).
        record.present = false;
        if (record.servingVersions().length > 0) void this.unloadRecord(record);
      }
    }
    // Ensembles using a model that just lost its versions stop serving first; those whose folder is
    // still there are then re-checked below and report which model they miss.
    this.unloadBrokenEnsembles();
    const sources = [...scan.models.values()];
    for (const s of sources) {
      const record = this.recordFor(s.name, s.namespace);
      record.explicit = true;
      record.present = true;
    }
    const failures2 = await this.applySources(sources, new Map());
    await this.settleEnsembles();
    return [...failures, ...failures2];
  }

  /**
   * After a load: ensembles that lost a composing model (a dropped pinned version) stop serving,
   * and ensembles waiting for their models are loaded again. Their failures are logged only: a
   * load reports on the models it was asked for (Triton's LoadUnloadModels).
   */
  async settleEnsembles(): Promise<void> {
    this.unloadBrokenEnsembles();
    for (const line of await this.reloadRestoredEnsembles()) this.deps.log.error(line);
  }

  /** Explicit loads: the named models plus (recursively) the composing models they name. */
  async loadNamed(names: readonly string[], override: LoadOverride | undefined): Promise<string[]> {
    const failures: string[] = [];
    const sources: ModelSource[] = [];
    const overrides = new Map<string, LoadOverride>();
    const seen = new Set<string>();
    const addModel = async (name: string, top: boolean): Promise<void> => {
      if (seen.has(name)) return;
      seen.add(name);
      try {
        assertSafeModelName(name);
        let found: ModelSource[];
        if (top && override) {
          overrides.set(name, override);
          found = override.dir ? [{ name, namespace: '', repository: override.dir, dir: override.dir, uploaded: true }] : await this.deps.repository.findAll(name);
        } else found = await this.deps.repository.findAll(name);
        // With namespacing, a name loads in every repository holding it (Triton polls each identifier).
        for (const source of found) {
          sources.push(source);
          const record = this.recordFor(source.name, source.namespace);
          record.present = true;
          if (top) record.explicit = true;
        }
        // Composing models are polled and loaded with their ensemble (Triton's polling chain).
        const config = overrides.get(name)?.config;
        const deps = config ? composingModels(config) : (await Promise.all(found.map((f) => this.peekComposing(f)))).flat();
        for (const dep of deps) await addModel(dep, false);
      } catch (err) {
        const e = InferError.from(err);
        this.deps.onFailure?.(name, e);
        if (top) failures.push(e.message);
        else this.deps.log.error(e.message);
      }
    };
    try {
      for (const name of names) await addModel(name, true);
      if (failures.length > 0 && sources.length === 0) return failures;
      const applied = await this.applySources(sources, overrides);
      await this.settleEnsembles();
      return [...failures, ...applied];
    } finally {
      // Uploaded files go as soon as no live version was loaded from them: those of a failed load
      // (under ever new names they filled the disk), and those a successful reload replaced. Those
      // of a version that keeps serving after a failed reload stay: its instances restart from them.
      for (const name of seen) {
        for (const record of this.recordsNamed(name)) {
          await removeUploads(record, (dir) => ![...record.slots.values()].some((slot) => slot.live && slot.dir === dir));
        }
      }
    }
  }

  /** Reads an ensemble's step model names without failing on an otherwise invalid config. */
  private async peekComposing(source: ModelSource): Promise<string[]> {
    try {
      await this.deps.repository.localize(source);
      const text = await readFile(await this.deps.repository.configPath(source.dir), 'utf8');
      return composingModels(this.deps.codec.parseText(text, 'config.pbtxt'));
    } catch {
      return [];
    }
  }

  async prepareOverride(name: string, options: LoadOptions): Promise<LoadOverride> {
    const override = await prepareLoadOverride(name, options, {
      codec: this.deps.codec,
      allowFiles: this.deps.allowModelFileOverride,
    });
    // Held by the record from now on, so an unload or a stop during the load removes it too.
    if (override.dir) this.recordFor(name).overrideDirs.add(override.dir);
    return override;
  }

  /**
   * Reads every source, then loads: plain models concurrently, each ensemble once the models it
   * names have been applied. Returns failure lines in Triton's log wording.
   */
  async applySources(sources: readonly ModelSource[], overrides: ReadonlyMap<string, LoadOverride>): Promise<string[]> {
    const failures: string[] = [];
    /** By model key. */
    const resolved = new Map<string, ResolvedModel>();
    await Promise.all(
      sources.map(async (source) => {
        const record = this.recordFor(source.name, source.namespace);
        try {
          const r = await this.deps.repository.read(source, overrides.get(source.name) ?? {});
          resolved.set(record.key, r);
        } catch (err) {
          this.deps.onFailure?.(source.name, InferError.from(err));
          const message = InferError.from(err).message;
          failures.push(`${this.deps.polling ? 'Poll failed for' : 'failed to read'} model directory '${source.name}': ${message}`);
          // A model that is serving keeps serving when its new config is broken (poll reload).
          if (record.servingVersions().length === 0) {
            record.error = message;
            record.resolved = undefined;
          }
        }
      }),
    );

    // A step's model among those read now: in the ensemble's namespace, else the only one of its name.
    const readKey = (name: string, namespace: string): string | undefined => {
      if (resolved.has(modelKey(namespace, name))) return modelKey(namespace, name);
      const keys = [...resolved.entries()].filter(([, r]) => r.source.name === name).map(([k]) => k);
      return keys.length === 1 ? keys[0] : undefined;
    };
    const done = new Map<string, Promise<void>>();
    const apply = (key: string): Promise<void> => {
      let p = done.get(key);
      if (!p) {
        p = (async () => {
          const model = resolved.get(key)!;
          const { name, namespace } = model.source;
          const deps = composingModels(model.config)
            .map((d) => readKey(d, namespace))
            .filter((k): k is string => k !== undefined && k !== key);
          // Through loaded models too: reloading eb -> ea while ea -> eb serves closed a cycle that
          // loaded, and every request to either recursed until the stack overflowed. Each step
          // resolves from the repository of the ensemble that names it.
          const stepOf = (from: StepNode, m: string): StepNode | undefined => {
            const k = readKey(m, from.namespace);
            const source = k ? resolved.get(k)! : this.tryResolve(m, from.namespace)?.resolved;
            return source && { id: modelIdText(source.source.namespace, source.source.name), namespace: source.source.namespace, config: source.config };
          };
          const start = { id: modelIdText(namespace, name), namespace, config: model.config };
          const cycle = composingModels(model.config).length > 0 ? findCycle(start, stepOf) : undefined;
          if (!cycle) await Promise.all(deps.map((d) => apply(d)));
          failures.push(...(await applyModel(this.apply, model, cycle, overrides.has(name))));
        })();
        done.set(key, p);
      }
      return p;
    };
    await Promise.all([...resolved.keys()].map((n) => apply(n)));
    return failures;
  }
}

/** A model the cycle check reaches, with the repository its own steps resolve from. */
interface StepNode extends DependencyNode {
  readonly namespace: string;
}
