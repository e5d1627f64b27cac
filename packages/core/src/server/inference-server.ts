/**
 * InferenceServer: model repositories + backends → loaded model versions behind schedulers, with
 * Triton's routing errors, request checks, metadata, repository index, model control (none /
 * poll / explicit), statistics and graceful stop. Transports talk to it through
 * `InferenceServerApi` only.
 *
 * Concurrency: model-control operations (start, poll, load, unload, stop) run one at a time;
 * inference never waits for them. Routing and enqueue happen in one synchronous step, so a
 * version swapped by a reload never receives a request after its scheduler was told to stop.
 *
 * Over 400 lines because it is the server's facade, InferenceServerApi's methods, most a few
 * lines handing off to the module of their job (request-dispatch.ts answers requests with tracing,
 * caching and the in-flight count; model-routing.ts finds the version; model-lifecycle.ts loads and
 * unloads; model-metrics-snapshot.ts reports). Start, stop, polling and model control stay here:
 * they run one at a time on this class's queue.
 *
 * @example
 * const server = new InferenceServer({ repositories: ['model_repository'], backends: [onnxBackend()] });
 * await server.start();
 * const response = await server.infer({ id: '1', model: 'simple', inputs });
 * await server.stop();
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import { logBlock, silentLogger, type Logger } from '../logger.ts';
import { systemClock, type Clock } from '../scheduler/scheduler.ts';
import type { InferRequest, InferResponse, ResponseSink } from '../types.ts';
import { ModelRepository } from '../repository/model-repository.ts';
import type { ConfigCodec } from '../repository/config-codec.ts';
import { defaultConfigCodec } from '../repository/config-codec.ts';
import { assertSafeModelName } from '../repository/model-name.ts';
import { modelKey } from '../repository/model-identifier.ts';
import type {
  InferenceServerApi,
  LoadOptions,
  ModelIndexEntry,
  ModelMetadata,
  ModelMetricsSnapshot,
  ModelStatistics,
  ServerMetadata,
} from './server-api.ts';
import { modelMetadata, serverMetadata } from './server-metadata.ts';
import { validateRequest } from './request-validation.ts';
import { splitRowsOf } from '../scheduler/split-oversized.ts';
import { parseModelVersion } from './model-version.ts';
import type { VersionLoadDeps } from './version-loader.ts';
import { ModelLifecycle } from './model-lifecycle.ts';
import { removeUploads } from './version-unload.ts';
import type { LoadedVersion } from './loaded-version.ts';
import type { ModelRecord } from './model-record.ts';
import { formatTable } from './table-printer.ts';
import { settlesWithin } from './settles-within.ts';
import { sweepStaleOverrides } from './load-overrides.ts';
import { CustomMetrics, type CustomFamilySnapshot } from '../metrics/custom-metrics.ts';
import { ResponseCache } from '../cache/response-cache.ts';
import { ResponseCaching } from './response-caching.ts';
import { RateLimiter } from '../scheduler/rate-limiter.ts';
import { FORCED_DISPOSE_GRACE_MS } from './held-versions.ts';
import { modelMetricsSnapshot } from './model-metrics-snapshot.ts';
import { RequestDispatch } from './request-dispatch.ts';
import { routeModel, tryRouteModel } from './model-routing.ts';
import { StartGate } from './start-gate.ts';
import type { InferenceServerOptions, ModelControlMode } from './inference-server-options.ts';

const POLL_MODE_ERROR = 'explicit model load / unload is not allowed if polling is enabled';

export class InferenceServer implements InferenceServerApi {
  private readonly repository: ModelRepository;
  private readonly codec: ConfigCodec;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly mode: ModelControlMode;
  private readonly lifecycle: ModelLifecycle;
  private ops: Promise<unknown> = Promise.resolve();
  /** Aborted by stop(): loads still running are abandoned (see abandoned-load.ts). */
  private readonly loads = new AbortController();
  private started = false;
  private stopping = false;
  /** The stop's outcome, once a stop began (see stop()). */
  private stopped: Promise<boolean> | undefined;
  /** Client requests accepted and not yet answered (a stop waits for them before unloading). */
  private inflight = 0;
  private onIdle: (() => void) | undefined;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  /** The failure lines of the last poll (see pollNow). */
  private loggedPollFailures = new Set<string>();
  private readonly loadDeps: VersionLoadDeps;
  /** Custom metrics every model publishes (python-like MetricFamily), rendered beside Triton's. */
  private readonly custom = new CustomMetrics();
  /** The response cache, when `responseCacheBytes` configures one. */
  private readonly caching: ResponseCaching | undefined;
  /** Answers routed requests: tracing, caching, timeouts, the in-flight count. */
  private readonly dispatch: RequestDispatch;

  constructor(private readonly options: InferenceServerOptions) {
    this.log = options.log ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.mode = options.modelControlMode ?? 'none';
    this.codec = options.configCodec ?? defaultConfigCodec;
    this.repository = new ModelRepository({
      repositories: options.repositories,
      cacheDir: options.repositoryCacheDir,
      backends: options.backends,
      modelConfigName: options.modelConfigName,
      disableAutoCompleteConfig: options.disableAutoCompleteConfig === true || options.strictModelConfig === true,
      codec: this.codec,
      log: this.log,
      backendConfig: options.backendConfig,
      ...(options.workerPolicy ? { workerPolicy: options.workerPolicy } : {}),
      namespacing: options.modelNamespacing === true,
    });
    this.infer = this.infer.bind(this);
    this.inferStream = this.inferStream.bind(this);
    if (options.responseCache && options.responseCacheBytes !== undefined) {
      throw new InferError('INVALID_ARG', 'found multiple cache configurations, but only a single cache is currently supported');
    }
    const store = options.responseCache ?? (options.responseCacheBytes !== undefined ? new ResponseCache(options.responseCacheBytes) : undefined);
    if (store) this.caching = new ResponseCaching(store, (name, version, namespace) => this.tryRoute(name, version, namespace)?.config, this.log);
    this.dispatch = new RequestDispatch({
      caching: this.caching,
      clock: this.clock,
      route: (request, client, namespace) => this.routeForInference(request, client, namespace),
      tryRoute: (name, version, namespace) => this.tryRoute(name, version, namespace),
      clientAccepted: () => this.inflight++,
      clientSettled: () => this.settled(),
    });
    this.loadDeps = {
      // Ensemble steps and BLS calls belong to a client request already accepted: like Triton's
      // InferAsync while SERVER_EXITING, they are served during a stop, so that request finishes.
      infer: (request, namespace) => this.dispatch.infer(request, false, namespace),
      inferStream: (request, sink, namespace) => this.dispatch.inferStream(request, sink, false, namespace),
      getModelConfig: (name, version, namespace) => this.tryRoute(name, version, namespace)?.config,
      backendConfig: options.backendConfig,
      ...(options.workerPolicy ? { workerPolicy: options.workerPolicy } : {}),
      clock: options.clock,
      log: this.log,
      retries: Math.max(0, options.modelLoadRetryCount ?? 0),
      checkOnly: options.checkOnly === true,
      metrics: this.custom,
      onHealth: (loaded, down) => this.onVersionHealth(loaded, down),
      signal: this.loads.signal,
      instanceStarts: new StartGate(options.instanceStarts),
      ...(options.rateLimit ? { rateLimiter: new RateLimiter(options.rateLimit.resources) } : {}),
    };
    this.lifecycle = new ModelLifecycle({
      serverFeatures: { responseCache: this.caching !== undefined, rateLimit: options.rateLimit !== undefined },
      repository: this.repository,
      codec: this.codec,
      log: this.log,
      loadDeps: this.loadDeps,
      allowModelFileOverride: options.allowModelFileOverride === true,
      isStopping: () => this.stopping,
      polling: this.mode === 'poll',
      namespacing: options.modelNamespacing === true,
      ...(options.unloadTimeoutMs !== undefined ? { unloadTimeoutMs: options.unloadTimeoutMs } : {}),
      ...(options.modelLimits ? { limits: options.modelLimits } : {}),
      ...(options.latencyMetrics ? { latencyMetrics: options.latencyMetrics } : {}),
      ...(options.onModelFailure ? { onFailure: options.onModelFailure } : {}),
    });
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Loads the startup models (all of them in `none`/`poll` mode; `startupModels` in `explicit`
   * mode), composing models before their ensembles. With `exitOnError` (default) it rejects with
   * every failure, one per line in Triton's log wording.
   */
  async start(): Promise<void> {
    if (this.started) throw new InferError('ALREADY_EXISTS', 'server already started');
    this.started = true;
    // Upload folders a killed server left behind (named with their writer's pid).
    void sweepStaleOverrides().then((gone) => {
      if (gone.length > 0) this.log.info(`removed ${gone.length} model upload folder(s) left by servers that are gone`);
    });
    // A missing or unreadable repository fails startup in every mode, whatever `exitOnError` says
    // (Triton: `error: creating server: Internal - failed to stat file <path>`).
    const unreadable = await this.repository.checkRepositories();
    if (unreadable.length > 0) {
      for (const line of unreadable) this.log.error(line);
      await this.stop();
      throw new InferError('INTERNAL', unreadable.join('\n'));
    }
    const failures = await this.serialized(async () => {
      if (this.mode === 'explicit') {
        const wanted = this.options.startupModels ?? [];
        if (wanted.includes('*')) {
          if (wanted.length > 1) throw new InferError('INVALID_ARG', "Wildcard model name '*' must be the ONLY startup model if specified at all.");
          return this.lifecycle.syncWithRepository(true);
        }
        return this.lifecycle.loadNamed(wanted, undefined);
      }
      return this.lifecycle.syncWithRepository(true);
    });
    for (const line of failures) this.log.error(line);
    if (this.mode === 'poll') this.loggedPollFailures = new Set(failures);
    logBlock(this.log, 'info', this.modelTable());
    if (failures.length > 0 && (this.options.exitOnError ?? true)) {
      await this.stop();
      throw new InferError('INTERNAL', failures.join('\n'));
    }
    const secs = this.options.repositoryPollSecs ?? 15;
    if (this.mode === 'poll' && secs > 0) {
      this.pollTimer = setInterval(() => {
        this.pollNow().catch((err: unknown) => this.log.error(`failed to poll model repository: ${InferError.from(err).message}`));
      }, secs * 1000);
      this.pollTimer.unref?.();
    }
  }

  /**
   * Poll mode: rescans the repositories now and applies what changed (new, removed and changed
   * models and versions). Resolves with the failures, in Triton's log wording.
   */
  pollNow(): Promise<string[]> {
    if (this.mode !== 'poll') return Promise.reject(new InferError('UNAVAILABLE', 'repository polling is only enabled in poll mode'));
    if (this.stopping) return Promise.reject(new InferError('UNAVAILABLE', 'Server is stopping'));
    return this.serialized(async () => {
      if (this.stopping) return [];
      const failures = await this.lifecycle.syncWithRepository(false);
      // A failure the previous poll logged already is not logged again until it changes or clears.
      for (const line of failures) if (!this.loggedPollFailures.has(line)) this.log.error(line);
      this.loggedPollFailures = new Set(failures);
      return failures;
    });
  }

  /**
   * Readiness drops, new requests get UNAVAILABLE, loads still running are abandoned, accepted
   * requests finish (their ensemble steps and BLS calls included: no model unloads while a client
   * request is in flight), then models unload; past `timeoutMs` (Triton's --exit-timeout-secs) what
   * still runs is torn down. Model control still running (an unload draining a request, a
   * repository read that stalled) counts against the same `timeoutMs`.
   *
   * Resolves true when everything finished in time, false when the exit timeout expired and what
   * still ran was torn down (Triton's `Exit timeout expired. Exiting immediately.`, exit code 1).
   * Every call gets the first stop's outcome.
   */
  stop(options: { timeoutMs?: number } = {}): Promise<boolean> {
    this.stopped ??= this.stopOnce(options.timeoutMs ?? 30_000);
    return this.stopped;
  }

  private async stopOnce(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    const started = Date.now();
    const left = () => timeoutMs - (Date.now() - started);
    let expired = false;
    this.loads.abort();
    if (!(await settlesWithin(this.ops, left()))) {
      expired = true;
      this.log.warn(`model control (a load, unload or poll) still running after ${timeoutMs} ms; the stop goes on without it`);
    }
    if (this.inflight > 0 && !(await settlesWithin(new Promise<void>((resolve) => (this.onIdle = resolve)), left()))) expired = true;
    for (const record of this.lifecycle.models.values()) {
      for (const slot of record.slots.values()) if (slot.live) slot.state = 'UNLOADING';
    }
    // Serving versions and those still draining from an earlier unload or reload.
    const live: LoadedVersion[] = this.lifecycle.held.all();
    const pending = new Set(live);
    const drained = Promise.all(live.map((v) => v.unload().finally(() => pending.delete(v))));
    await settlesWithin(drained, left());
    // Past the exit timeout (Triton's --exit-timeout-secs) what is still running is torn down.
    if (pending.size > 0) {
      expired = true;
      this.log.warn(`${pending.size} model version(s) still busy after ${timeoutMs} ms; stopping them`);
      // A backend's dispose that never returns (an in-process instance stuck in native code, a
      // model.dispose awaiting something that never comes) must not hold the stop: the exit timeout
      // is a promise to the orchestrator. The grace covers the worker host's own kill of a worker that
      // does not exit on request.
      const undisposed = new Set(pending);
      const forced = Promise.all([...pending].map((v) => v.forceDispose().finally(() => undisposed.delete(v))));
      if (!(await settlesWithin(forced, FORCED_DISPOSE_GRACE_MS))) {
        const stuck = [...undisposed].map((v) => `model '${v.name}' version ${v.version}`).join(', ');
        this.log.error(`${stuck} did not finish disposing ${FORCED_DISPOSE_GRACE_MS} ms after being stopped; the server stops without waiting`);
      }
    }
    for (const record of this.lifecycle.models.values()) {
      for (const slot of record.slots.values()) {
        slot.live = undefined;
        slot.state = 'UNAVAILABLE';
        slot.reason = 'unloaded';
      }
      await removeUploads(record, () => true);
    }
    await this.repository.dispose();
    return !expired;
  }

  /**
   * Triton's model table, logged once the startup models are loaded (server.cc
   * PrintBackendAndModelSummary): one row per version with its state and reason. A model whose
   * config could not be read (Triton leaves it out) is listed with version `-` and the reason.
   */
  modelTable(): string {
    const rows: string[][] = [];
    for (const record of [...this.lifecycle.models.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const versions = [...record.slots.entries()].sort(([a], [b]) => a - b);
      if (versions.length === 0) {
        rows.push([record.name, '-', record.error ? `UNAVAILABLE: ${record.error}` : 'Not loaded: No model version was found']);
      }
      for (const [version, slot] of versions) rows.push([record.name, String(version), slot.reason ? `${slot.state}: ${slot.reason}` : slot.state]);
    }
    return formatTable(['Model', 'Version', 'Status'], rows);
  }

  /**
   * Every instance of `loaded` is down (`down` = the last crash cause): its slot reads UNAVAILABLE
   * with that reason (index, readiness, requests) while it keeps restarting; an instance serving
   * again makes it READY again. Only the version serving in the slot counts (not one being replaced).
   */
  private onVersionHealth(loaded: LoadedVersion, down: string | undefined): void {
    const slot = this.lifecycle.models.get(modelKey(loaded.namespace, loaded.name))?.slots.get(loaded.version);
    if (!slot || slot.live !== loaded || this.stopping) return;
    if (down !== undefined) {
      if (slot.state !== 'READY' && !slot.down) return;
      if (!slot.down) this.log.error(`model '${loaded.name}' version ${loaded.version} is unavailable: ${down}`);
      slot.state = 'UNAVAILABLE';
      slot.reason = down;
      slot.down = true;
    } else if (slot.down) {
      slot.state = 'READY';
      slot.reason = '';
      slot.down = false;
      this.log.info(`model '${loaded.name}' version ${loaded.version} is serving again`);
    }
  }

  // ---------------------------------------------------------------- health and metadata

  isLive(): boolean {
    return !this.stopping;
  }

  isReady(): boolean {
    if (!this.started || this.stopping) return false;
    if (this.options.strictReadiness === false) return true;
    for (const record of this.lifecycle.models.values()) {
      if (record.error && record.slots.size === 0) return false;
      for (const slot of record.slots.values()) {
        if (slot.state === 'READY') continue;
        // Unloaded versions do not count, nor ensembles unloaded because a model they use was.
        if (slot.state === 'UNAVAILABLE' && (slot.reason === 'unloaded' || slot.dependencyUnloaded)) continue;
        return false;
      }
    }
    return true;
  }

  serverMetadata(): ServerMetadata {
    return serverMetadata();
  }

  modelReady(name: string, version?: string): boolean {
    return this.tryRoute(name, parseModelVersion(version)) !== undefined;
  }

  modelMetadata(name: string, version?: string): ModelMetadata {
    const loaded = this.route(name, parseModelVersion(version));
    return modelMetadata(loaded.config, this.lifecycle.models.get(modelKey(loaded.namespace, name))!.readyVersions());
  }

  modelConfig(name: string, version?: string): ModelConfig {
    const loaded = this.route(name, parseModelVersion(version));
    const ensemble = loaded.config.ensemble_scheduling;
    if (this.options.modelNamespacing !== true || !ensemble) return loaded.config;
    // Triton's config of an ensemble names, in each step's `model_namespace`, the repository its
    // model resolves to (ConnectDependencyGraph writes it); here that is where it resolves now.
    const namespaceOf = (model: string): string => this.lifecycle.tryResolve(model, loaded.namespace)?.namespace ?? '';
    return { ...loaded.config, ensemble_scheduling: { ...ensemble, step: ensemble.step.map((st) => ({ ...st, model_namespace: namespaceOf(st.model_name) })) } };
  }

  isDecoupled(name: string, version?: string): boolean {
    return this.route(name, parseModelVersion(version)).config.model_transaction_policy?.decoupled === true;
  }

  // ---------------------------------------------------------------- inference

  /**
   * Routes, validates and enqueues in one synchronous step. The request's `timeout` and its signal
   * always answer it, even if its execute never returns (see request-guard.ts).
   */
  infer(request: InferRequest): Promise<InferResponse> {
    return this.dispatch.infer(request, true);
  }

  inferStream(request: InferRequest, sink: ResponseSink): void {
    this.dispatch.inferStream(request, sink, true);
  }

  private settled(): void {
    if (--this.inflight === 0) this.onIdle?.();
  }

  private routeForInference(request: InferRequest, client: boolean, namespace?: string): LoadedVersion {
    if (client && this.stopping) throw new InferError('UNAVAILABLE', 'Server is stopping: new inference requests are refused');
    const loaded = this.route(request.model, request.version, namespace);
    // A model that splits oversized requests (tritium.split_rows) accepts up to that many rows.
    validateRequest(loaded.config, request, splitRowsOf(loaded.config));
    return loaded;
  }

  /** `routeModel` on this server's models (model-routing.ts). */
  private route(name: string, version: number | undefined, namespace?: string): LoadedVersion {
    return routeModel(this.lifecycle, this.options.modelNamespacing === true, name, version, namespace);
  }

  private tryRoute(name: string, version: number | undefined, namespace?: string): LoadedVersion | undefined {
    return tryRouteModel(this.lifecycle, this.options.modelNamespacing === true, name, version, namespace);
  }

  // ---------------------------------------------------------------- statistics

  statistics(name?: string, version?: string): ModelStatistics[] {
    const v = parseModelVersion(version);
    // Same lookup errors as inference (Triton resolves the model first, ambiguity included).
    const only = name ? this.lifecycle.resolve(name) : undefined;
    if (name) {
      if (v !== undefined) this.route(name, v);
      else if (!only || (this.options.modelNamespacing === true && !only.present)) this.route(name, undefined);
    }
    const out: ModelStatistics[] = [];
    for (const record of [...this.lifecycle.models.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      if (name && record !== only) continue;
      for (const ver of record.readyVersions()) {
        if (v !== undefined && ver !== v) continue;
        out.push(this.lifecycle.statsFor(record, ver, record.slots.get(ver)!.live!.config).snapshot());
      }
    }
    return out;
  }

  metrics(): ModelMetricsSnapshot[] {
    return modelMetricsSnapshot(this.lifecycle.models.values(), (live) => this.caching?.enabledFor(live) === true);
  }

  /** The custom metric families models published, with their metrics' values now. */
  customMetrics(): CustomFamilySnapshot[] {
    return this.custom.snapshot();
  }

  // ---------------------------------------------------------------- repository API

  /**
   * Triton's index: every model folder of the repositories, plus models loaded from the load API's
   * `file:` overrides until they are unloaded; per known version its state and reason; a model never loaded has only its name (state UNKNOWN here, version ''); a name in
   * several repositories is UNAVAILABLE. `readyOnly` keeps READY versions only.
   */
  async repositoryIndex(options: { readyOnly?: boolean; repository?: string } = {}): Promise<ModelIndexEntry[]> {
    refuseRepositoryName(options.repository);
    const scan = await this.repository.scan();
    // Models loaded through the load API from `file:` overrides live outside the repositories; they
    // are listed while their files are held (Triton lists repository folders only).
    // By key: with namespacing a name held in several repositories is listed once per repository.
    const fromApi = [...this.lifecycle.models.values()].filter((r) => r.overrideDirs.size > 0).map((r) => r.key);
    const nameOf = (key: string): string => scan.models.get(key)?.name ?? this.lifecycle.models.get(key)?.name ?? key;
    const keys = [...new Set([...scan.models.keys(), ...scan.duplicates, ...fromApi])].sort((a, b) => nameOf(a).localeCompare(nameOf(b)) || a.localeCompare(b));
    const out: ModelIndexEntry[] = [];
    for (const key of keys) {
      const name = nameOf(key);
      if (scan.duplicates.has(key)) {
        if (!options.readyOnly) out.push({ name, version: '', state: 'UNAVAILABLE', reason: 'model appears in two or more repositories' });
        continue;
      }
      const record = this.lifecycle.models.get(key);
      const versions = record ? [...record.slots.entries()].sort(([a], [b]) => a - b) : [];
      if (versions.length === 0) {
        if (options.readyOnly) continue;
        if (record?.error) out.push({ name, version: '', state: 'UNAVAILABLE', reason: record.error });
        else out.push({ name, version: '', state: 'UNKNOWN', reason: '' });
        continue;
      }
      for (const [version, slot] of versions) {
        if (options.readyOnly && slot.state !== 'READY') continue;
        out.push({ name, version: String(version), state: slot.state, reason: slot.reason });
      }
    }
    return out;
  }

  /**
   * Explicit mode: (re)loads `name` and its composing models. `configJson` replaces config.pbtxt;
   * `files` (only with `allowModelFileOverride`) supply the model's files.
   */
  loadModel(name: string, options: LoadOptions & { repository?: string } = {}): Promise<void> {
    try {
      refuseRepositoryName(options.repository);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.mode !== 'explicit') return Promise.reject(new InferError('UNAVAILABLE', POLL_MODE_ERROR));
    if (this.stopping) return Promise.reject(new InferError('UNAVAILABLE', 'Server is stopping'));
    return this.serialized(async () => {
      assertSafeModelName(name);
      // Override problems are the caller's request errors, reported as they are.
      const override = options.configJson !== undefined || options.files ? await this.lifecycle.prepareOverride(name, options) : undefined;
      const failures = await this.lifecycle.loadNamed([name], override);
      if (failures.length > 0) throw new InferError('INVALID_ARG', failures.map((f) => `load failed for model '${name}': ${f}\n`).join(''));
    });
  }

  /**
   * Explicit mode: unloads every version of `name` (and, with `unloadDependents`, composing models
   * nobody else uses); with namespacing, in every repository holding that name (Triton unloads
   * each identifier the name polls to).
   */
  unloadModel(name: string, options: { unloadDependents?: boolean; repository?: string } = {}): Promise<void> {
    try {
      refuseRepositoryName(options.repository);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.mode !== 'explicit') return Promise.reject(new InferError('UNAVAILABLE', POLL_MODE_ERROR));
    // Model control only starts the unloads; the call then waits for their drain outside it, so a
    // version that does not drain (bounded by the unload timeout) holds no other model's load.
    return this.serialized(async () => {
      assertSafeModelName(name);
      const records = this.lifecycle.recordsNamed(name);
      if (records.length === 0) return { drained: Promise.resolve() };
      const toUnload: ModelRecord[] = [];
      for (const record of records) {
        record.explicit = false;
        record.present = false;
        toUnload.push(record);
        if (options.unloadDependents) toUnload.push(...this.lifecycle.orphanedComposing(record));
      }
      const drained = toUnload.map((r) => this.lifecycle.unloadRecord(r));
      // Ensembles that used what was unloaded stop serving too (Triton unloads them).
      drained.push(this.lifecycle.unloadBrokenEnsembles().drained);
      return { drained: Promise.all(drained).then(() => undefined) };
    }).then(({ drained }) => drained);
  }

  // ---------------------------------------------------------------- model control internals

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.ops.then(fn, fn);
    this.ops = run.catch(() => undefined);
    return run;
  }
}

/**
 * Triton's repository API takes no repository name (`/v2/repository/<name>/...`, gRPC
 * `repository_name`): index, load and unload all refuse one, first, with its words (a load or
 * unload naming another repository must not act on the model this one serves).
 */
function refuseRepositoryName(repository: string | undefined): void {
  if (repository) throw new InferError('UNSUPPORTED', "'repository_name' specification is not supported");
}
