/**
 * Bringing one model's loaded versions in line with what its repository holds now: new versions
 * load, changed ones reload beside the serving one (swapped in only when READY), versions the
 * policy dropped unload once their replacements serve. Each version's instances are reserved
 * against the server-wide bounds before it loads.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { Logger } from '../logger.ts';
import type { ResolvedModel, ResolvedVersion } from '../repository/model-repository.ts';
import { inertFieldWarnings, type ServerFeatures } from '../config/inert-fields.ts';
import { instancesPerVersion } from '../config/validate-instances.ts';
import type { HeldVersions } from './held-versions.ts';
import type { InstanceReservations } from './instance-reservations.ts';
import type { LoadedVersion } from './loaded-version.ts';
import { checkModelLimits, limitsApply, type ModelLimits } from './model-limits.ts';
import type { ModelRecord, VersionSlot } from './model-record.ts';
import type { ModelRegistry } from './model-registry.ts';
import type { ModelStats } from './model-stats.ts';
import { statusText } from './status-text.ts';
import { loadVersion, type VersionLoadDeps } from './version-loader.ts';
import { unloadDroppedVersions } from './version-unload.ts';

/** What applying a model needs from the server (a part of ModelLifecycleDeps). */
export interface ApplyDeps {
  /** Whether the server has a response cache and rate limiting (config fields that need them warn otherwise). */
  readonly serverFeatures: ServerFeatures;
  readonly log: Logger;
  readonly loadDeps: VersionLoadDeps;
  readonly isStopping: () => boolean;
  /**
   * Poll mode: a config that cannot be read is logged in Triton's words (`Poll failed for model
   * directory 'm': ...`); in the other modes nothing polls, so the line says what failed instead
   * (`failed to read model directory 'm': ...`). A version that failed to load is tried again only
   * once its files change.
   */
  readonly polling?: boolean;
  /**
   * Each failure as it happens, with its error (the failure lines carry only the message) and, when
   * a version failed to load, that version (none when the model's config failed).
   */
  readonly onFailure?: (model: string, error: InferError, version?: number) => void;
  /** Ceilings on what a client-sent config (load API) may ask for; none: unbounded. */
  readonly limits?: ModelLimits;
}

/** The lifecycle's state that applying a model reads and changes. */
export interface ApplyContext {
  readonly deps: ApplyDeps;
  readonly registry: ModelRegistry;
  readonly held: HeldVersions;
  readonly reservations: InstanceReservations;
  readonly statsFor: (record: ModelRecord, version: number, config: ModelConfig) => ModelStats;
}

/** One application of a model: what each of its versions reads, and the failure lines they add. */
interface ModelJob {
  readonly ctx: ApplyContext;
  readonly model: ResolvedModel;
  readonly record: ModelRecord;
  /** The model as it was resolved before this application. */
  readonly previous: ResolvedModel | undefined;
  readonly config: ModelConfig;
  readonly configError: InferError | undefined;
  /** The ceilings, when they bind this model. */
  readonly limits: ModelLimits | undefined;
  readonly failures: string[];
  /** Logs the config's inert-field warnings, the first time a version of this application loads. */
  readonly warnOnce: () => void;
}

/**
 * Brings one model's loaded versions in line with `model` (the module's comment says how).
 * `preError` fails every version (a dependency cycle found before); `clientSent`: its config or
 * files came through the load API (the ceilings bound it). Returns failure lines.
 */
export async function applyModel(ctx: ApplyContext, model: ResolvedModel, preError: InferError | undefined, clientSent: boolean): Promise<string[]> {
  const record = ctx.registry.recordFor(model.source.name, model.source.namespace);
  const previous = record.resolved;
  record.resolved = model;
  record.error = undefined;
  const limits = ctx.deps.limits && limitsApply(ctx.deps.limits, clientSent || model.source.uploaded === true) ? ctx.deps.limits : undefined;
  const { config, configError } = checkedConfig(ctx.registry, model, preError, limits);
  // Warned once per load of the model, not on every poll that finds it unchanged.
  let warned = false;
  const warnOnce = (): void => {
    if (warned) return;
    warned = true;
    for (const warning of inertFieldWarnings(config, ctx.deps.serverFeatures)) ctx.deps.log.warn(warning);
  };
  const job: ModelJob = { ctx, model, record, previous, config, configError, limits, failures: [], warnOnce };
  await Promise.all(model.versions.map((rv) => applyVersion(job, rv)));
  unloadDroppedVersions(record, new Set(model.versions.map((v) => v.version)), ctx.held, ctx.deps.log);
  return job.failures;
}

/** The config to load: an ensemble's completed against its steps as loaded now, checked against the ceilings. */
function checkedConfig(
  registry: ModelRegistry,
  model: ResolvedModel,
  preError: InferError | undefined,
  limits: ModelLimits | undefined,
): { config: ModelConfig; configError: InferError | undefined } {
  let config = model.config;
  let configError = preError;
  if (!configError && model.config.platform === 'ensemble') {
    try {
      config = registry.completeEnsemble(model.config, model.source.namespace);
    } catch (err) {
      configError = InferError.from(err);
    }
  }
  if (!configError && limits) {
    try {
      checkModelLimits(config, model.versions.length, limits);
    } catch (err) {
      configError = InferError.from(err);
    }
  }
  return { config, configError };
}

/** Loads or reloads one version of the job's model unless it is serving unchanged. */
async function applyVersion(job: ModelJob, rv: ResolvedVersion): Promise<void> {
  const { ctx, model, record, config, configError } = job;
  let slot = record.slots.get(rv.version);
  // A version whose instances are down is not reloaded by a poll: it keeps restarting itself.
  const unchanged = slot?.live && (slot.state === 'READY' || slot.down) && slot.live.stamp === rv.stamp && job.previous?.stamp === model.stamp;
  if (unchanged) return;
  // Poll mode tries a failed load again only once its files changed (the failure was logged).
  const filesStamp = `${rv.stamp}\0${model.stamp}`;
  if (ctx.deps.polling && !configError && slot?.failedStamp === filesStamp) return;
  if (!configError) job.warnOnce();
  if (!slot) {
    slot = { state: 'UNKNOWN', reason: '' };
    record.slots.set(rv.version, slot);
  }
  const serving = slot.state === 'READY' || slot.down ? slot.live : undefined;
  if (!serving) {
    slot.state = 'LOADING';
    slot.reason = '';
  }
  ctx.deps.log.info(`loading: ${model.source.name}:${rv.version}`);
  const failed = slot;
  const fail = (err: InferError, filesFailed = false): void => {
    ctx.deps.onFailure?.(model.source.name, err, rv.version);
    if (filesFailed) failed.failedStamp = filesStamp;
    job.failures.push(`failed to load '${model.source.name}' version ${rv.version}: ${statusText(err.code)}: ${err.message}`);
    if (serving) return; // a failed reload keeps the old version serving
    failed.state = 'UNAVAILABLE';
    failed.reason = err.message;
    failed.live = undefined;
  };
  if (configError) return fail(configError);
  const started = performance.now();
  const stats = ctx.statsFor(record, rv.version, config);
  const count = instancesPerVersion(config);
  const bounded = job.limits !== undefined;
  try {
    ctx.reservations.reserve(model.source.name, count, bounded);
  } catch (err) {
    return fail(InferError.from(err));
  }
  try {
    let loaded: LoadedVersion;
    try {
      loaded = await loadVersion(model, rv, config, stats, ctx.deps.loadDeps, job.limits ? { limits: job.limits } : {});
      loaded.namespace = model.source.namespace;
      // From here the version's instances are counted while it is held (or not at all).
      ctx.held.add(loaded, bounded);
    } finally {
      ctx.reservations.release(count, bounded);
    }
    if (ctx.deps.isStopping()) {
      void ctx.held.retire(loaded);
      return;
    }
    stats.loadDurationSecs = (performance.now() - started) / 1000;
    serveLoaded(slot, loaded, model.source.dir);
    ctx.deps.log.info(`successfully loaded '${model.source.name}' version ${rv.version}`);
    // The old version drains its in-flight requests after the swap (in the background: a stuck
    // one must not hold model control); nothing new reaches it.
    if (serving) void ctx.held.retire(serving);
  } catch (err) {
    fail(InferError.from(err), config.platform !== 'ensemble');
  }
}

/** The slot serves `loaded` now (READY), loaded from `dir`. */
function serveLoaded(slot: VersionSlot, loaded: LoadedVersion, dir: string): void {
  slot.live = loaded;
  slot.dir = dir;
  slot.state = 'READY';
  slot.reason = '';
  slot.dependencyUnloaded = false;
  slot.down = false;
  slot.failedStamp = undefined;
}
