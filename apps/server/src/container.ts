/**
 * The composition root: the only place dependency injection is used. Backends are multi-injected
 * under TOKENS.Backend, so a platform team adds its own by binding one more:
 *
 * @example
 * const container = createContainer({ options });
 * container.bind(TOKENS.Backend).toConstantValue(myBackend());
 * const server = container.get<TritiumServer>(TOKENS.TritiumServer);
 * await server.start();
 */
import 'reflect-metadata';
import { Container, type ResolutionContext } from 'inversify';
import { InferenceServer, type InferenceServerApi } from '@tritium/core';
import { type Backend } from '@tritium/core/backend';
import { type CustomFamilySnapshot, type LatencyMetricsOptions } from '@tritium/core/metrics';
import { TOKENS } from './tokens.ts';
import type { ServeOptions } from './cli/serve-options.ts';
import { TritonLog } from './logging/triton-log.ts';
import { HttpTransport } from './http/http-server.ts';
import { GrpcTransport } from './grpc/grpc-server.ts';
import { MetricsTransport } from './metrics/metrics-server.ts';
import { SharedMemoryRegistry } from './protocol/shared-memory.ts';
import { TraceManager } from './tracing/trace-manager.ts';
import type { TransportContext } from './protocol/context.ts';
import { TritiumServer } from './tritium-server.ts';
import { BackendCatalog } from './backend-catalog.ts';
import { repositorySources } from './repository-sources.ts';
import { RequestBudget } from './protocol/request-budget.ts';
import { transportGauges } from './metrics/transport-gauges.ts';
import { descriptorLimit, planConnections, type ConnectionPlan } from './protocol/connection-plan.ts';
import { registerServerPaths } from './protocol/server-paths.ts';
import { OpenAiRoutes } from './openai/routes.ts';
import { ApiKeys } from './openai/api-keys.ts';
import type { ResponseCacheStore } from '@tritium/core/cache';
import { RedisCacheStore } from './cache/redis-cache-store.ts';
import { cacheErrorFamilies } from './cache/cache-metrics.ts';

/** Builds the InferenceServer from the bound backends and the options. */
export type InferenceServerFactory = (deps: { backends: Backend[]; options: ServeOptions; log: TritonLog; responseCache?: ResponseCacheStore }) => InferenceServerApi;

export interface CreateContainerOptions {
  readonly options: ServeOptions;
  /** Backends bound at creation (more can be bound later under TOKENS.Backend). */
  readonly backends?: readonly Backend[];
  readonly log?: TritonLog;
  /** How to build the InferenceServer (default: core's InferenceServer over the repositories). */
  readonly inferenceServer?: InferenceServerFactory;
}

export function createContainer(init: CreateContainerOptions): Container {
  const { options } = init;
  const c = new Container();
  c.bind(TOKENS.ServeOptions).toConstantValue(options);
  bindServing(c, init);
  // Errors name files inside these relative to them (server-paths.ts); object stores have no local path.
  registerServerPaths([...options.modelRepositories.filter((r) => !/^[a-z0-9]+:\/\//.test(r)), ...(options.repositoryCacheDir ? [options.repositoryCacheDir] : [])]);
  // Connection caps that fit below the descriptor limit together (TritiumServer logs a lowered one).
  const connections = planConnections(
    {
      http: options.allowHttp ? options.httpConnections.maxConnections : 0,
      grpc: options.allowGrpc ? options.grpcMaxConnections : 0,
      openai: options.openaiPort !== undefined ? options.httpConnections.maxConnections : 0,
      metrics: options.allowMetrics ? options.metricsMaxConnections : 0,
      health: options.healthPort !== undefined ? options.healthMaxConnections : 0,
    },
    descriptorLimit(),
  );
  c.bind(TOKENS.ConnectionPlan).toConstantValue(connections);
  // One budget of request bytes held at once, shared by both transports.
  bindTransports(c, options, { budget: new RequestBudget(options.maxBufferedRequestSize), connections });
  c.bind(BackendCatalog).toSelf().inSingletonScope();
  c.bind(TOKENS.TritiumServer).to(TritiumServer).inSingletonScope();
  return c;
}

/** The log, the backends, the response cache, the InferenceServer and the context every transport serves it with. */
function bindServing(c: Container, init: CreateContainerOptions): void {
  const { options } = init;
  c.bind(TOKENS.Log).toConstantValue(
    init.log ??
      new TritonLog({
        info: options.logInfo,
        warning: options.logWarning,
        error: options.logError,
        verbose: options.logVerbose,
        format: options.logFormat,
        file: options.logFile,
      }),
  );
  for (const b of init.backends ?? []) c.bind(TOKENS.Backend).toConstantValue(b);
  const factory = init.inferenceServer ?? defaultInferenceServer;
  const redis = options.redisCache;
  if (redis) c.bind(TOKENS.ResponseCache).toDynamicValue((ctx) => new RedisCacheStore(redis, ctx.get<TritonLog>(TOKENS.Log))).inSingletonScope();
  c.bind(TOKENS.InferenceServer)
    .toDynamicValue((ctx) =>
      factory({
        backends: [...ctx.get(BackendCatalog).backends],
        options,
        log: ctx.get<TritonLog>(TOKENS.Log),
        ...(redis ? { responseCache: ctx.get<ResponseCacheStore>(TOKENS.ResponseCache) } : {}),
      }),
    )
    .inSingletonScope();
  c.bind(TOKENS.TransportContext)
    .toDynamicValue(
      (ctx): TransportContext => ({
        api: ctx.get(TOKENS.InferenceServer),
        log: ctx.get(TOKENS.Log),
        limits: {
          maxInputBytes: options.httpMaxInputSize,
          maxJsonBytes: options.httpMaxJsonSize,
          maxTensorElements: options.maxTensorElements,
          maxHeaderCount: options.httpMaxHeaderCount,
        },
        streams: { maxQueuedBytes: options.streamMaxQueuedSize, stallTimeoutMs: options.streamStallTimeoutSecs * 1000 },
        shm: new SharedMemoryRegistry(options.allowClientShm),
        tracing: new TraceManager(options.trace, ctx.get(TOKENS.Log)),
        allowModelFileLoad: options.allowModelFileLoad,
        serverId: options.serverId,
        headerForward: options.headerForward,
      }),
    )
    .inSingletonScope();
}

/** What the transports share: the request bytes held at once, and each listener's connection cap. */
interface SharedLimits {
  readonly budget: RequestBudget;
  readonly connections: ConnectionPlan;
}

/** HTTP (with the OpenAI routes), the OpenAI-only port, gRPC and metrics. */
function bindTransports(c: Container, options: ServeOptions, { budget, connections }: SharedLimits): void {
  // The OpenAI routes, on the HTTP port and on --openai-port: one instance, one set of keys.
  c.bind(OpenAiRoutes)
    .toDynamicValue(
      (ctx) => new OpenAiRoutes(ctx.get(TOKENS.TransportContext), { apiKeys: new ApiKeys(options.openaiApiKeys), restricted: options.httpRestrictedApi }),
    )
    .inSingletonScope();
  const httpTransport = (ctx: ResolutionContext, listener: { address: string; port: number; openaiOnly?: true }) =>
    new HttpTransport(ctx.get(TOKENS.TransportContext), {
      ...listener,
      restricted: options.httpRestrictedApi,
      tls: options.httpSsl,
      connections: { ...options.httpConnections, maxConnections: listener.openaiOnly ? (connections.openai ?? 0) : connections.http },
      budget,
      openai: ctx.get(OpenAiRoutes),
    });
  c.bind(TOKENS.HttpTransport)
    .toDynamicValue((ctx) => httpTransport(ctx, { address: options.httpAddress, port: options.httpPort }))
    .inSingletonScope();
  c.bind(TOKENS.OpenAiTransport)
    .toDynamicValue((ctx) => httpTransport(ctx, { address: options.openaiAddress, port: options.openaiPort ?? 0, openaiOnly: true }))
    .inSingletonScope();
  c.bind(TOKENS.GrpcTransport)
    .toDynamicValue(
      (ctx) =>
        new GrpcTransport(ctx.get(TOKENS.TransportContext), {
          address: options.grpcAddress,
          port: options.grpcPort,
          restricted: options.grpcRestrictedProtocol,
          tls: options.grpcSsl,
          connection: options.grpcConnection,
          maxMessageBytes: options.grpcMaxInputSize,
          reflection: options.grpcReflection,
          maxHealthWatches: options.grpcHealthMaxWatches,
          budget,
          connections: { maxConnections: connections.grpc, firstRequestTimeoutMs: options.grpcFirstRequestTimeoutSecs * 1000 },
        }),
    )
    .inSingletonScope();
  c.bind(TOKENS.MetricsTransport)
    .toDynamicValue((ctx) => {
      const http = ctx.get<HttpTransport>(TOKENS.HttpTransport);
      const grpc = ctx.get<GrpcTransport>(TOKENS.GrpcTransport);
      return new MetricsTransport(
        ctx.get(TOKENS.InferenceServer),
        {
          address: options.metricsAddress,
          port: options.metricsPort,
          maxConnections: connections.metrics,
          counterLatencies: options.metricsConfig.counterLatencies,
          gauges: withCacheErrors(
            transportGauges(budget, () => ({ http: http.openConnections, grpc: grpc.openConnections })),
            options.redisCache ? ctx.get<ResponseCacheStore>(TOKENS.ResponseCache) : undefined,
          ),
        },
        ctx.get(TOKENS.Log),
      );
    })
    .inSingletonScope();
}

/** Core's InferenceServer over `--model-repository`, configured by the serve flags. */
export const defaultInferenceServer: InferenceServerFactory = ({ backends, options, log, responseCache }) =>
  new InferenceServer({
    repositories: repositorySources(options.modelRepositories),
    repositoryCacheDir: options.repositoryCacheDir,
    backends,
    modelControlMode: options.modelControlMode,
    startupModels: options.loadModels,
    repositoryPollSecs: options.repositoryPollSecs,
    disableAutoCompleteConfig: options.disableAutoCompleteConfig,
    strictModelConfig: options.strictModelConfig,
    strictReadiness: options.strictReadiness,
    modelNamespacing: options.modelNamespacing,
    exitOnError: options.exitOnError,
    modelConfigName: options.modelConfigName,
    modelLoadRetryCount: options.modelLoadRetryCount,
    allowModelFileOverride: options.allowModelFileLoad,
    backendConfig: options.backendConfig,
    workerPolicy: { logBytesPerSec: options.modelLogRate, strictSandbox: options.strictSandbox },
    latencyMetrics: latencyMetricsOf(options),
    modelLimits: options.modelLimits,
    unloadTimeoutMs: options.modelUnloadTimeoutSecs * 1000,
    instanceStarts: options.modelLoadThreadCount,
    ...(options.responseCacheBytes !== undefined ? { responseCacheBytes: options.responseCacheBytes } : {}),
    ...(responseCache ? { responseCache } : {}),
    ...(options.rateLimit === 'execution_count' ? { rateLimit: { resources: options.rateLimitResources } } : {}),
    log,
  });

/** The transports' gauges, then the response cache store's error counters when it has them. */
function withCacheErrors(gauges: () => CustomFamilySnapshot[], store: ResponseCacheStore | undefined): () => CustomFamilySnapshot[] {
  if (!store) return gauges;
  const errors = cacheErrorFamilies(store);
  return () => [...gauges(), ...errors()];
}

/** `--metrics-config` as core's latency metrics options. */
export function latencyMetricsOf(options: ServeOptions): LatencyMetricsOptions {
  const m = options.metricsConfig;
  return {
    ...(m.summaryLatencies ? { summaries: { quantiles: m.summaryQuantiles, maxAgeMs: m.summaryMaxAgeSecs * 1000, ageBuckets: 5 } } : {}),
    ...(m.histogramLatencies ? { firstResponseHistogram: true } : {}),
  };
}
