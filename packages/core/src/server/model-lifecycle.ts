/**
 * The server's model lifecycle: which models and versions exist, their states, and the work of
 * reading, loading, reloading and unloading them (composing models before their ensembles; a
 * changed version loads beside the serving one and is swapped in only when READY). Callers
 * serialize operations; inference only reads `models`. An unload changes states at once and drains
 * in the background (held-versions.ts): no operation waits on another model's drain.
 * (Over 400 lines: the lifecycle's steps share the records and the instance accounting.)
 */
import { readFile, rm } from 'node:fs/promises';
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { Logger } from '../logger.ts';
import type { ModelRepository, ModelSource, ResolvedModel } from '../repository/model-repository.ts';
import type { ConfigCodec } from '../repository/config-codec.ts';
import { assertSafeModelName } from '../repository/model-name.ts';
import { ambiguousModelMessage, modelIdText, modelKey } from '../repository/model-identifier.ts';
import { checkComposingModels, composingModels, findCycle, type ComposingModelView, type DependencyNode } from '../ensemble/validate/ensemble-dependencies.ts';
import { validateEnsembleModels } from '../ensemble/validate/ensemble-models.ts';
import type { LoadOptions } from './server-api.ts';
import { ModelRecord } from './model-record.ts';
import { EnsembleStats, ModelStats } from './model-stats.ts';
import { statusText } from './status-text.ts';
import { loadVersion, type VersionLoadDeps } from './version-loader.ts';
import { prepareLoadOverride, type LoadOverride } from './load-overrides.ts';
import { inertFieldWarnings, type ServerFeatures } from '../config/inert-fields.ts';
import type { LatencyMetricsOptions } from '../metrics/latency-metrics.ts';
import { instancesPerVersion, MAX_INSTANCES_PER_SERVER } from '../config/validate-instances.ts';
import { HeldVersions, DEFAULT_UNLOAD_TIMEOUT_MS } from './held-versions.ts';
import { checkModelLimits, checkProcessCeiling, limitsApply, type ModelLimits } from './model-limits.ts';
import type { LoadedVersion } from './loaded-version.ts';

export interface ModelLifecycleDeps {
  /** Whether the server has a response cache and rate limiting (config fields that need them warn otherwise). */
  readonly serverFeatures: ServerFeatures;
  readonly repository: ModelRepository;
  readonly codec: ConfigCodec;
  readonly log: Logger;
  readonly loadDeps: VersionLoadDeps;
  readonly allowModelFileOverride: boolean;
  readonly isStopping: () => boolean;
  /**
   * Poll mode: a config that cannot be read is logged in Triton's words (`Poll failed for model
   * directory 'm': ...`); in the other modes nothing polls, so the line says what failed instead
   * (`failed to read model directory 'm': ...`).
   */
  readonly polling?: boolean;
  /**
   * Each failure as it happens, with its error (the failure lines carry only the message) and, when
   * a version failed to load, that version (none when the model's config failed).
   */
  readonly onFailure?: (model: string, error: InferError, version?: number) => void;
  /** `--metrics-config` summaries and first-response histogram. */
  readonly latencyMetrics?: LatencyMetricsOptions;
  /** How long an unloading version may drain its requests before what still runs is stopped (default 30 s). */
  readonly unloadTimeoutMs?: number;
  /** Ceilings on what a client-sent config (load API) may ask for; none: unbounded. */
  readonly limits?: ModelLimits;
  /** `--model-namespacing`: records are per repository and names resolve as in `resolve`. */
  readonly namespacing?: boolean;
}

export class ModelLifecycle {
  /** Every model known, by `modelKey(namespace, name)` (the name alone without namespacing). */
  readonly models = new Map<string, ModelRecord>();
  /** The records of each name (Triton's global map), for `resolve`. */
  private readonly byName = new Map<string, ModelRecord[]>();
  private readonly stats = new Map<string, ModelStats>();
  /** Every loaded version not yet disposed (serving or draining), for the instance bounds and the stop. */
  readonly held: HeldVersions;
  /** Instances of versions being loaded now (not yet held), counted against MAX_INSTANCES_PER_SERVER. */
  private loadingInstances = 0;
  /** Of those, instances of models the ceilings bound (counted against `limits.processes`). */
  private loadingBounded = 0;

  constructor(private readonly deps: ModelLifecycleDeps) {
    this.held = new HeldVersions(deps.log, deps.unloadTimeoutMs ?? DEFAULT_UNLOAD_TIMEOUT_MS);
  }

  /**
   * Takes `count` instances from the server-wide bounds for a version about to load, or throws
   * naming the bound. Synchronous, so loads running side by side cannot both pass the check.
   * Instances of versions still draining count until they are gone.
   */
  private reserveInstances(model: string, count: number, bounded: boolean): void {
    const loaded = this.loadingInstances + this.held.instances();
    if (loaded + count > MAX_INSTANCES_PER_SERVER) {
      throw new InferError(
        'INVALID_ARG',
        `model ${model} would start ${count} instances beside the ${loaded} loaded in the server; at most ${MAX_INSTANCES_PER_SERVER} are allowed in all models together`,
      );
    }
    if (bounded && this.deps.limits) checkProcessCeiling(model, count, this.loadingBounded + this.held.instances(true), this.deps.limits);
    this.loadingInstances += count;
    if (bounded) this.loadingBounded += count;
  }

  private releaseReservation(count: number, bounded: boolean): void {
    this.loadingInstances -= count;
    if (bounded) this.loadingBounded -= count;
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
   * The record `name` means. Without namespacing, the one of that name. With it (Triton's
   * FindModelIdentifier, and an ensemble's preferred identifier for its steps): the present record
   * in namespace `prefer` if there is one, else the only present record of that name; several
   * present and none preferred is Triton's ambiguity error (INVALID_ARG). With none present, a
   * known record (an unloaded one) still answers, so its state is reported.
   */
  resolve(name: string, prefer?: string): ModelRecord | undefined {
    if (!this.deps.namespacing) return this.models.get(name);
    if (prefer !== undefined) {
      const own = this.models.get(modelKey(prefer, name));
      if (own?.present) return own;
    }
    const all = this.byName.get(name) ?? [];
    const present = all.filter((r) => r.present);
    if (present.length > 1) throw new InferError('INVALID_ARG', ambiguousModelMessage(name, present.length));
    if (present.length === 1) return present[0];
    return (prefer !== undefined ? this.models.get(modelKey(prefer, name)) : undefined) ?? (all.length === 1 ? all[0] : undefined);
  }

  /** `resolve`, with an ambiguous name as unknown (an ensemble step: "not available or ambiguous"). */
  tryResolve(name: string, prefer?: string): ModelRecord | undefined {
    try {
      return this.resolve(name, prefer);
    } catch {
      return undefined;
    }
  }

  /** Every record of `name`, one per namespace holding it. */
  recordsNamed(name: string): readonly ModelRecord[] {
    return this.byName.get(name) ?? [];
  }

  /** Composing models of `record` (recursively) that no other loaded ensemble uses and nobody loaded by name. */
  orphanedComposing(record: ModelRecord): ModelRecord[] {
    const removed = new Set<string>([record.key]);
    const out: ModelRecord[] = [];
    let frontier = composingModels(record.resolved?.config ?? {});
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const dep of frontier) {
        const r = this.tryResolve(dep, record.namespace);
        if (!r || removed.has(r.key) || r.explicit) continue;
        const usedElsewhere = [...this.models.values()].some(
          (o) => !removed.has(o.key) && o.readyVersions().length > 0 && composingModels(o.resolved?.config ?? {}).includes(dep),
        );
        if (usedElsewhere) continue;
        removed.add(r.key);
        out.push(r);
        next.push(...composingModels(r.resolved?.config ?? {}));
      }
      frontier = next;
    }
    return out;
  }

  /**
   * Unloads every version of `record` and, once they are gone, the upload folders they used. The
   * states change now (UNLOADING, no new requests); the promise resolves once they drained (bounded
   * by the unload timeout). Model control does not wait for it.
   */
  unloadRecord(record: ModelRecord): Promise<void> {
    const dirs = new Set(record.overrideDirs);
    return this.unloadSlots(record).then(() =>
      // A load that came meanwhile may use a new upload folder, or (a reload) one of these. Nobody
      // may be waiting for this (a poll does not): a folder that cannot be removed is logged.
      removeUploads(record, (dir) => dirs.has(dir) && ![...record.slots.values()].some((slot) => slot.live && slot.dir === dir)).catch((err: unknown) =>
        this.deps.log.error(`model '${record.name}': could not remove its uploaded files: ${InferError.from(err).message}`),
      ),
    );
  }

  /**
   * Unloads every loaded version of `record`: UNLOADING now, then UNAVAILABLE (`unloaded`) once
   * drained; a version a load replaced meanwhile is left as that load set it. An ensemble unloaded
   * because a model it uses is gone (`dependency`) reads UNAVAILABLE with that reason at once, so
   * the ensembles above it name it, while it drains.
   */
  private unloadSlots(record: ModelRecord, dependency?: string): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (const slot of record.slots.values()) {
      if (slot.live) {
        const live = slot.live;
        slot.down = false;
        const drained = this.held.retire(live).then(() => this.deps.log.info(`successfully unloaded '${live.name}' version ${live.version}`));
        if (dependency !== undefined) {
          slot.live = undefined;
          slot.state = 'UNAVAILABLE';
          slot.reason = dependency;
          slot.dependencyUnloaded = true;
          jobs.push(drained);
          continue;
        }
        slot.state = 'UNLOADING';
        slot.reason = '';
        slot.dependencyUnloaded = false;
        jobs.push(
          drained.then(() => {
            if (slot.live !== live) return;
            slot.live = undefined;
            slot.state = 'UNAVAILABLE';
            slot.reason = 'unloaded';
          }),
        );
        continue;
      }
      if (slot.state !== 'UNAVAILABLE' || slot.dependencyUnloaded) {
        slot.state = 'UNAVAILABLE';
        slot.reason = 'unloaded';
      }
      // Unloaded on purpose now: it no longer waits for its composing models to come back.
      slot.dependencyUnloaded = false;
      // An ensemble unloaded for a missing model waits for it in every unloaded version.
      if (dependency !== undefined && slot.state === 'UNAVAILABLE' && slot.reason === 'unloaded') {
        slot.reason = dependency;
        slot.dependencyUnloaded = true;
      }
    }
    return Promise.all(jobs).then(() => undefined);
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
        drains.push(this.unloadSlots(record, problem));
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
        failures.push(...(await this.applyModel(model, undefined)));
        for (const slot of record.slots.values()) slot.dependencyUnloaded = false;
        // A reloaded ensemble may be what an outer ensemble was waiting for.
        if (record.readyVersions().length > 0) changed = true;
      }
    }
    return failures;
  }

  /** Why an ensemble cannot run against the models serving now, or undefined when it can. */
  private composingProblem(config: ModelConfig, namespace: string): string | undefined {
    try {
      checkComposingModels(config, (name) => this.composingView(name, namespace), modelIdText(namespace, config.name));
      return undefined;
    } catch (err) {
      return InferError.from(err).message;
    }
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

  recordFor(name: string, namespace = ''): ModelRecord {
    const key = modelKey(namespace, name);
    let record = this.models.get(key);
    if (!record) {
      record = new ModelRecord(name, namespace);
      this.models.set(key, record);
      this.byName.set(name, [...(this.byName.get(name) ?? []), record]);
    }
    return record;
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
          failures.push(...(await this.applyModel(model, cycle, overrides.has(name))));
        })();
        done.set(key, p);
      }
      return p;
    };
    await Promise.all([...resolved.keys()].map((n) => apply(n)));
    return failures;
  }

  /**
   * Brings one model's loaded versions in line with `model`: loads new versions, reloads changed
   * ones beside the serving one (swapped in only when READY), unloads versions the policy dropped.
   * `clientSent`: its config or files came through the load API (the ceilings bound it).
   */
  private async applyModel(model: ResolvedModel, preError: InferError | undefined, clientSent = false): Promise<string[]> {
    const record = this.recordFor(model.source.name, model.source.namespace);
    const previous = record.resolved;
    record.resolved = model;
    record.error = undefined;
    const failures: string[] = [];
    const wanted = new Set(model.versions.map((v) => v.version));

    let config = model.config;
    let configError = preError;
    if (!configError && model.config.platform === 'ensemble') {
      try {
        config = this.completeEnsemble(model.config, model.source.namespace);
      } catch (err) {
        configError = InferError.from(err);
      }
    }
    const limits = this.deps.limits && limitsApply(this.deps.limits, clientSent || model.source.uploaded === true) ? this.deps.limits : undefined;
    if (!configError && limits) {
      try {
        checkModelLimits(config, model.versions.length, limits);
      } catch (err) {
        configError = InferError.from(err);
      }
    }

    // Warned once per load of the model, not on every poll that finds it unchanged.
    let warned = false;
    await Promise.all(
      model.versions.map(async (rv) => {
        let slot = record.slots.get(rv.version);
        // A version whose instances are down is not reloaded by a poll: it keeps restarting itself.
        const unchanged =
          slot?.live && (slot.state === 'READY' || slot.down) && slot.live.stamp === rv.stamp && previous?.stamp === model.stamp;
        if (unchanged) return;
        // Poll mode tries a failed load again only once its files changed (the failure was logged).
        const filesStamp = `${rv.stamp}\0${model.stamp}`;
        if (this.deps.polling && !configError && slot?.failedStamp === filesStamp) return;
        if (!warned && !configError) {
          warned = true;
          for (const warning of inertFieldWarnings(config, this.deps.serverFeatures)) this.deps.log.warn(warning);
        }
        if (!slot) {
          slot = { state: 'UNKNOWN', reason: '' };
          record.slots.set(rv.version, slot);
        }
        const serving = slot.state === 'READY' || slot.down ? slot.live : undefined;
        if (!serving) {
          slot.state = 'LOADING';
          slot.reason = '';
        }
        this.deps.log.info(`loading: ${model.source.name}:${rv.version}`);
        const fail = (err: InferError, filesFailed = false): void => {
          this.deps.onFailure?.(model.source.name, err, rv.version);
          if (filesFailed) slot.failedStamp = filesStamp;
          failures.push(`failed to load '${model.source.name}' version ${rv.version}: ${statusText(err.code)}: ${err.message}`);
          if (serving) return; // a failed reload keeps the old version serving
          slot.state = 'UNAVAILABLE';
          slot.reason = err.message;
          slot.live = undefined;
        };
        if (configError) return fail(configError);
        const started = performance.now();
        const stats = this.statsFor(record, rv.version, config);
        const count = instancesPerVersion(config);
        const bounded = limits !== undefined;
        try {
          this.reserveInstances(model.source.name, count, bounded);
        } catch (err) {
          return fail(InferError.from(err));
        }
        try {
          let loaded: LoadedVersion;
          try {
            loaded = await loadVersion(model, rv, config, stats, this.deps.loadDeps, limits ? { limits } : {});
            loaded.namespace = model.source.namespace;
            // From here the version's instances are counted while it is held (or not at all).
            this.held.add(loaded, bounded);
          } finally {
            this.releaseReservation(count, bounded);
          }
          if (this.deps.isStopping()) {
            void this.held.retire(loaded);
            return;
          }
          stats.loadDurationSecs = (performance.now() - started) / 1000;
          slot.live = loaded;
          slot.dir = model.source.dir;
          slot.state = 'READY';
          slot.reason = '';
          slot.dependencyUnloaded = false;
          slot.down = false;
          slot.failedStamp = undefined;
          this.deps.log.info(`successfully loaded '${model.source.name}' version ${rv.version}`);
          // The old version drains its in-flight requests after the swap (in the background: a stuck
          // one must not hold model control); nothing new reaches it.
          if (serving) void this.held.retire(serving);
        } catch (err) {
          fail(InferError.from(err), config.platform !== 'ensemble');
        }
      }),
    );
    // Versions the policy no longer selects (or whose folder is gone) are unloaded once the
    // versions that replace them are serving; if none of them loaded, the old ones keep serving.
    if (model.versions.some((rv) => record.slots.get(rv.version)?.state === 'READY')) {
      for (const [, slot] of [...record.slots.entries()].filter(([v, slot]) => !wanted.has(v) && slot.live)) {
        const live = slot.live!;
        slot.state = 'UNLOADING';
        slot.down = false;
        void this.held.retire(live).then(() => {
          this.deps.log.info(`successfully unloaded '${live.name}' version ${live.version}`);
          if (slot.live !== live) return;
          slot.live = undefined;
          slot.state = 'UNAVAILABLE';
          slot.reason = 'unloaded';
        });
      }
    }
    return failures;
  }

  /**
   * Checks an ensemble against its composing models as loaded now (Triton's CheckNode +
   * ValidateEnsembleConfig) and returns its config completed with the decoupled flag it inherits.
   */
  private completeEnsemble(config: ModelConfig, namespace: string): ModelConfig {
    const ensembleId = modelIdText(namespace, config.name);
    checkComposingModels(config, (name) => this.composingView(name, namespace), ensembleId);
    const stepRecord = (m: string): ModelRecord => this.tryResolve(m, namespace)!;
    const result = validateEnsembleModels(config, (m) => stepRecord(m).latestServing()!.config, {
      ensemble: ensembleId,
      step: (m) => modelIdText(stepRecord(m).namespace, m),
    });
    // Triton always writes the inherited flag, so an ensemble's config carries
    // `model_transaction_policy` (decoupled false or true) once loaded.
    return { ...config, model_transaction_policy: { ...config.model_transaction_policy, decoupled: result.decoupled } };
  }

  private composingView(name: string, namespace: string): ComposingModelView {
    const r = this.tryResolve(name, namespace);
    if (!r || (!r.resolved && !r.error)) return { known: false, readyVersions: [] };
    return {
      known: true,
      id: modelIdText(r.namespace, r.name),
      configError: !r.resolved ? r.error : undefined,
      // A model whose instances are down for now still counts: it recovers by itself.
      readyVersions: r.servingVersions(),
      loadError: r.loadError(),
    };
  }
}

/** A model the cycle check reaches, with the repository its own steps resolve from. */
interface StepNode extends DependencyNode {
  readonly namespace: string;
}

/** Removes the record's upload folders that `unused` picks. */
export async function removeUploads(record: ModelRecord, unused: (dir: string) => boolean): Promise<void> {
  for (const dir of [...record.overrideDirs]) {
    if (!unused(dir)) continue;
    await rm(dir, { recursive: true, force: true });
    record.overrideDirs.delete(dir);
  }
}
