/**
 * Loads one model version: backend model, `instance_group` count × kind instances, warmup on each
 * instance, then its scheduler. Any failure disposes what was created and rethrows; retried up
 * to `retries` extra times (`--model-load-retry-count`).
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { BackendModel, InstanceSpec, ModelInstance } from '../backend/spi.ts';
import type { Logger } from '../logger.ts';
import type { Clock, Scheduler } from '../scheduler/scheduler.ts';
import { createScheduler } from '../scheduler/create-scheduler.ts';
import { loadInitialStates } from '../scheduler/sequence/implicit-state.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import type { ResolvedModel, ResolvedVersion } from '../repository/model-repository.ts';
import { runWarmup } from '../warmup/run-warmup.ts';
import { disposeAll, LoadedVersion } from './loaded-version.ts';
import type { ModelStats } from './model-stats.ts';
import type { CustomMetricsSink } from '../backend/spi.ts';
import type { RateLimiter } from '../scheduler/rate-limiter.ts';
import { rateLimitedInstance } from '../scheduler/rate-limited-instance.ts';
import { unlessAbandoned } from './abandoned-load.ts';
import type { WorkerPolicy } from '../worker/types.ts';
import type { StartGate } from './start-gate.ts';
import type { ModelLimits } from './model-limits.ts';

export interface VersionLoadDeps {
  /**
   * The server's inference for ensemble steps and BLS calls. `namespace` (an ensemble's, with
   * `--model-namespacing`) is where the step's model is looked up first.
   */
  readonly infer: (request: InferRequest, namespace?: string) => Promise<InferResponse>;
  readonly inferStream: (request: InferRequest, sink: ResponseSink, namespace?: string) => void;
  readonly getModelConfig: (name: string, version?: number, namespace?: string) => ModelConfig | undefined;
  readonly backendConfig?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Handed to every backend load (LoadSpec.workerPolicy). */
  readonly workerPolicy?: WorkerPolicy;
  readonly clock?: Clock;
  readonly log: Logger;
  readonly retries: number;
  /**
   * Check only (`tritium config`): each version goes through the backend's `loadModel` (which
   * checks the model file against the config) and is released again; no instance starts, no
   * warmup runs, and the version's scheduler refuses every request.
   */
  readonly checkOnly?: boolean;
  /**
   * Every instance of `loaded` is down (worker crash loop; `down` is the last cause), or one serves
   * again (`down` undefined).
   */
  readonly onHealth?: (loaded: LoadedVersion, down: string | undefined) => void;
  /** Custom metrics of the models (LoadSpec.metrics). */
  readonly metrics?: CustomMetricsSink;
  /** `--rate-limit execution_count`: the server's rate limiter, which every instance registers with. */
  readonly rateLimiter?: RateLimiter;
  /**
   * Aborted when the server stops: a load still running is abandoned (it fails at once, what it
   * created is disposed, whatever its backend creates later too), see abandoned-load.ts.
   */
  readonly signal?: AbortSignal;
  /** The server's bound on instances starting at once (--model-load-thread-count); none: unbounded. */
  readonly instanceStarts?: StartGate;
}

/** What one model's load carries besides its config: the ceilings that bound it, if any. */
export interface VersionLoadOptions {
  readonly limits?: ModelLimits;
}

/**
 * Which instances of one version are down. The version is down while all of them are (one that
 * serves keeps it READY; the scheduler prefers it); the server hears each change through `onHealth`.
 */
function versionHealth(count: number, deps: VersionLoadDeps) {
  const down = new Map<string, string>();
  let version: LoadedVersion | undefined;
  let reported = false;
  const report = (): void => {
    if (!version) return;
    const allDown = down.size >= count;
    if (allDown) deps.onHealth?.(version, [...down.values()].at(-1));
    else if (reported) deps.onHealth?.(version, undefined);
    reported = allDown;
  };
  return {
    callbacks: (name: string): Pick<InstanceSpec, 'onUnavailable' | 'onAvailable'> => ({
      onUnavailable: (reason) => {
        down.delete(name);
        down.set(name, reason);
        report();
      },
      onAvailable: () => {
        down.delete(name);
        report();
      },
    }),
    /** Binds the callbacks to the version once it exists (a crash during load is reported after it). */
    owner(loaded: LoadedVersion): LoadedVersion {
      version = loaded;
      if (down.size >= count) report();
      return loaded;
    },
  };
}

/** Instance specs of a config: one per count per device (KIND_GPU groups once per listed GPU). */
export function instanceSpecs(config: ModelConfig): InstanceSpec[] {
  const specs: InstanceSpec[] = [];
  config.instance_group.forEach((group, g) => {
    const groupName = group.name || `${config.name}_${g}`;
    const count = Math.max(1, group.count);
    if (group.kind === 'KIND_GPU') {
      const gpus = group.gpus.length > 0 ? group.gpus : [0];
      let index = 0;
      for (const device of gpus) {
        for (let i = 0; i < count; i++) specs.push({ name: `${groupName}_${index++}`, kind: 'GPU', device, groupName });
      }
    } else {
      const kind = group.kind === 'KIND_MODEL' ? 'MODEL' : 'CPU';
      for (let i = 0; i < count; i++) specs.push({ name: `${groupName}_${i}`, kind, device: 0, groupName });
    }
  });
  return specs;
}

async function loadOnce(
  model: ResolvedModel,
  rv: ResolvedVersion,
  config: ModelConfig,
  stats: ModelStats,
  deps: VersionLoadDeps,
  options: VersionLoadOptions,
): Promise<LoadedVersion> {
  // An ensemble's steps resolve in its own namespace first (Triton's preferred identifier).
  const namespace = model.source.namespace;
  const schedulerDeps = {
    modelName: config.name,
    version: rv.version,
    infer: (r: InferRequest) => deps.infer(r, namespace),
    inferStream: (r: InferRequest, sink: ResponseSink) => deps.inferStream(r, sink, namespace),
    getModelConfig: (name: string, version?: number) => deps.getModelConfig(name, version, namespace),
    clock: deps.clock,
    stats,
    log: deps.log,
  };
  if (deps.checkOnly) {
    if (model.backend) await checkBackendLoad(model, rv, config, deps);
    return new LoadedVersion(config.name, rv.version, config, rv.stamp, checkOnlyScheduler(config.name), [], undefined, stats);
  }
  if (!model.backend) {
    const scheduler = createScheduler(config, { ...schedulerDeps, instances: [] });
    return new LoadedVersion(config.name, rv.version, config, rv.stamp, scheduler, [], undefined, stats);
  }
  const signal = deps.signal;
  let backendModel: BackendModel | undefined;
  const created: CreatedInstance[] = [];
  let scheduled: ModelInstance[] | undefined;
  try {
    backendModel = await loadBackendModel(model, rv, config, deps, options);
    const health = versionHealth(instanceSpecs(config).length, deps);
    await startInstances(backendModel, config, deps, health, model.backend.parallelInstanceLoading === true, created);
    // Abandoned mid-warmup: the instances are disposed below, which fails the warmup's execute.
    await unlessAbandoned(runWarmup(config, model.source.dir, created.map((c) => c.instance)), signal, () => undefined);
    scheduled = deps.rateLimiter ? gateInstances(config, created, deps.rateLimiter) : created.map((c) => c.instance);
    const initialStates = config.sequence_batching?.state.some((st) => st.initial_state.length > 0)
      ? await loadInitialStates(config, model.source.dir)
      : undefined;
    const scheduler = createScheduler(config, { ...schedulerDeps, instances: scheduled, ...(initialStates ? { initialStates } : {}) });
    return health.owner(
      new LoadedVersion(config.name, rv.version, config, rv.stamp, scheduler, created, backendModel, stats, deps.rateLimiter ? scheduled : undefined),
    );
  } catch (err) {
    await disposeAll(scheduled ?? created.map((c) => c.instance), backendModel);
    throw InferError.from(err);
  }
}

/** An instance started for a version, with the spec it was started from. */
interface CreatedInstance {
  readonly spec: InstanceSpec;
  readonly instance: ModelInstance;
}

/** The backend's model for the version (`model.backend` is set); disposed if the load was abandoned meanwhile. */
function loadBackendModel(
  model: ResolvedModel,
  rv: ResolvedVersion,
  config: ModelConfig,
  deps: VersionLoadDeps,
  options: VersionLoadOptions,
): Promise<BackendModel> {
  const backend = model.backend!;
  const signal = deps.signal;
  return unlessAbandoned(
    backend.loadModel({
      config,
      version: rv.version,
      modelDir: model.source.dir,
      versionDir: rv.dir,
      log: deps.log,
      infer: deps.infer,
      inferStream: deps.inferStream,
      backendConfig: deps.backendConfig?.[backend.name],
      ...(deps.workerPolicy ? { workerPolicy: deps.workerPolicy } : {}),
      ...(model.source.uploaded ? { uploadedFiles: true } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(signal ? { signal } : {}),
    }),
    signal,
    (late) => late.dispose(),
  );
}

/**
 * Starts the config's instances of `loaded` (through the instance-start gate, if any; all at once
 * when the backend loads instances in `parallel`), pushing each started one into `created` so the
 * caller can dispose them if the load fails.
 */
async function startInstances(
  loaded: BackendModel,
  config: ModelConfig,
  deps: VersionLoadDeps,
  health: ReturnType<typeof versionHealth>,
  parallel: boolean,
  created: CreatedInstance[],
): Promise<void> {
  const signal = deps.signal;
  const create = (spec: InstanceSpec): Promise<ModelInstance> =>
    loaded.createInstance({ ...spec, ...health.callbacks(spec.name), ...(signal ? { signal } : {}) });
  const gate = deps.instanceStarts;
  const start = (spec: InstanceSpec): Promise<ModelInstance> =>
    unlessAbandoned(gate ? gate.run(config.name, () => create(spec), signal) : create(spec), signal, (late) => late.dispose());
  if (parallel) {
    // All instances start at once (4 tokenizer workers import their packages side by side); if
    // one fails, the others that started are disposed with the model below.
    const results = await Promise.allSettled(instanceSpecs(config).map(async (spec) => ({ spec, instance: await start(spec) })));
    for (const r of results) if (r.status === 'fulfilled') created.push(r.value);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } else {
    for (const spec of instanceSpecs(config)) created.push({ spec, instance: await start(spec) });
  }
}

/**
 * Registers each instance with the rate limiter (its group's `rate_limiter`, its device) and wraps
 * it so every execution holds its resources. A registration Triton refuses (a resource count too
 * small for the instance) unregisters the ones before it and fails the load.
 */
function gateInstances(config: ModelConfig, created: readonly { spec: InstanceSpec; instance: ModelInstance }[], limiter: RateLimiter): ModelInstance[] {
  const gated: ModelInstance[] = [];
  const slots: { unregister(): void }[] = [];
  try {
    for (const { spec, instance } of created) {
      const group = config.instance_group.find((g, i) => (g.name || `${config.name}_${i}`) === spec.groupName);
      const slot = limiter.register(`${config.name}/${spec.name}`, spec.device, group?.rate_limiter);
      slots.push(slot);
      gated.push(rateLimitedInstance(instance, slot));
    }
  } catch (err) {
    for (const s of slots) s.unregister();
    throw err;
  }
  return gated;
}

/** Check-only load: the backend loads the version (checking its files) and releases it at once. */
async function checkBackendLoad(model: ResolvedModel, rv: ResolvedVersion, config: ModelConfig, deps: VersionLoadDeps): Promise<void> {
  const backend = model.backend!;
  const backendModel = await backend.loadModel({
    config,
    version: rv.version,
    modelDir: model.source.dir,
    versionDir: rv.dir,
    log: deps.log,
    backendConfig: deps.backendConfig?.[backend.name],
    checkOnly: true,
  });
  await backendModel.dispose();
}

/** The scheduler of a check-only version: nothing runs, every request is refused. */
function checkOnlyScheduler(name: string): Scheduler {
  return {
    inflight: 0,
    enqueue: () => Promise.reject(new InferError('UNAVAILABLE', `model '${name}' was loaded to check its configuration only`)),
    stop: async () => {},
  };
}

/** Loads `rv` of `model` (with `config`, possibly completed by ensemble validation). */
export async function loadVersion(
  model: ResolvedModel,
  rv: ResolvedVersion,
  config: ModelConfig,
  stats: ModelStats,
  deps: VersionLoadDeps,
  options: VersionLoadOptions = {},
): Promise<LoadedVersion> {
  let lastError: InferError | undefined;
  for (let attempt = 0; attempt <= deps.retries; attempt++) {
    try {
      return await loadOnce(model, rv, config, stats, deps, options);
    } catch (err) {
      lastError = InferError.from(err);
      if (deps.signal?.aborted) break;
      if (attempt < deps.retries) deps.log.warn(`failed to load '${config.name}' version ${rv.version}, retrying: ${lastError.message}`);
    }
  }
  throw lastError!;
}
