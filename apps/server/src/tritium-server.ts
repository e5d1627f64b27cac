/**
 * The running server: the InferenceServer plus the HTTP, gRPC and metrics transports, started
 * and stopped in Triton's order (models first; on shutdown readiness drops, new requests are
 * refused, in-flight ones finish, then the listeners close).
 */
import { inject, injectable, optional } from 'inversify';
import { logBlock, type InferenceServerApi } from '@tritium/core';
import { TOKENS } from './tokens.ts';
import type { ServeOptions } from './cli/serve-options.ts';
import type { TritonLog } from './logging/triton-log.ts';
import type { HttpTransport } from './http/http-server.ts';
import type { GrpcTransport } from './grpc/grpc-server.ts';
import type { MetricsTransport } from './metrics/metrics-server.ts';
import type { TransportContext } from './protocol/context.ts';
import { checkListeners, listenFailure, plannedListeners } from './listeners.ts';
import { HealthThread } from './health/health-thread.ts';
import { serverOptionsTable } from './server-options-table.ts';
import { advertisedServerMetadata } from './protocol/extensions.ts';
import type { ConnectionPlan } from './protocol/connection-plan.ts';

export interface BoundPorts {
  http?: number;
  grpc?: number;
  metrics?: number;
  health?: number;
  openai?: number;
}

/** A response cache store that connects before models load and closes after they stop (Redis). */
interface OpenableCache {
  open(): Promise<void>;
  close?(): Promise<void>;
}

/** An InferenceServer implementation may need starting (core's loads the repositories). */
interface Startable {
  start?(): Promise<void>;
}

@injectable()
export class TritiumServer {
  readonly ports: BoundPorts = {};
  private stopping: Promise<boolean> | undefined;
  /** `--health-port`: the health endpoints on their own thread (none unless asked). */
  private readonly health: HealthThread | undefined;

  constructor(
    @inject(TOKENS.InferenceServer) readonly api: InferenceServerApi,
    @inject(TOKENS.ServeOptions) private readonly options: ServeOptions,
    @inject(TOKENS.Log) readonly log: TritonLog,
    @inject(TOKENS.TransportContext) readonly context: TransportContext,
    @inject(TOKENS.HttpTransport) private readonly http: HttpTransport,
    @inject(TOKENS.GrpcTransport) private readonly grpc: GrpcTransport,
    @inject(TOKENS.MetricsTransport) private readonly metrics: MetricsTransport,
    @inject(TOKENS.ConnectionPlan) private readonly connectionPlan: ConnectionPlan,
    /** `--openai-port`: started only when the flag is given. */
    @inject(TOKENS.OpenAiTransport) private readonly openai: HttpTransport,
    @inject(TOKENS.ResponseCache) @optional() private readonly responseCache?: OpenableCache,
  ) {
    this.health =
      options.healthPort !== undefined
        ? new HealthThread(api, options.healthAddress, options.healthPort, {
            restriction: options.httpRestrictedApi.health,
            tls: options.httpSsl,
            maxConnections: connectionPlan.health,
          })
        : undefined;
  }

  /**
   * Checks that every listener's port can be opened, loads models, then binds the enabled
   * transports; logs the bound ports in Triton's words. A busy port fails before any model loads
   * (ListenError, Triton's `failed to start HTTP service: ...` plus the flag that changes it).
   */
  async start(): Promise<BoundPorts> {
    const listeners = plannedListeners(this.options);
    await checkListeners(listeners);
    await this.responseCache?.open();
    await (this.api as InferenceServerApi & Startable).start?.();
    logBlock(this.log, 'info', serverOptionsTable(this.options, advertisedServerMetadata(this.context)));
    const lowered = this.connectionPlan.note;
    if (lowered?.warn) this.log.warn(lowered.message);
    else if (lowered) this.log.info(lowered.message);
    const health = this.health;
    const transports = { GRPC: this.grpc, HTTP: this.http, Metrics: this.metrics, Health: { start: () => health!.start() }, OpenAI: this.openai };
    const names = { GRPC: 'GRPCInferenceService', HTTP: 'HTTPService', Metrics: 'Metrics Service', Health: 'Health Service', OpenAI: 'OpenAI-Compatible Service' };
    const key = { GRPC: 'grpc', HTTP: 'http', Metrics: 'metrics', Health: 'health', OpenAI: 'openai' } as const;
    try {
      for (const l of listeners) {
        // Someone may still take a port between the check and here (models load for a while).
        const port = await transports[l.service].start().catch((e: unknown) => {
          throw listenFailure(l, e);
        });
        this.ports[key[l.service]] = port;
        this.log.info(`Started ${names[l.service]} at ${l.address}:${port}`);
      }
    } catch (e) {
      await this.stop();
      throw e;
    }
    return this.ports;
  }

  /**
   * Graceful stop within `--exit-timeout-secs` (idempotent). Resolves false when the exit timeout
   * expired and what still ran was torn down (or the inference server failed to stop).
   */
  stop(): Promise<boolean> {
    this.stopping ??= (async () => {
      const timeoutMs = this.options.exitTimeoutSecs * 1000;
      // HTTP stays up while the models drain (as Triton's does); its replies now close their
      // connections, and open gRPC streams end with UNAVAILABLE once their requests are answered.
      this.http.drain();
      this.openai.drain();
      this.grpc.drain();
      const stopping = this.api.stop({ timeoutMs });
      // Readiness is down from this moment; the health thread hears it now, not at its next report.
      this.health?.reportNow();
      const inTime = await stopping.then(
        (outcome) => outcome !== false,
        (e: unknown) => {
          this.log.error(`stopping the inference server: ${(e as Error).message}`);
          return false;
        },
      );
      await Promise.all([this.http.stop(1000), this.openai.stop(1000), this.grpc.stop(1000), this.metrics.stop(), this.health?.stop()]);
      await this.responseCache?.close?.().catch((e: unknown) => this.log.error(`closing the response cache: ${(e as Error).message}`));
      this.context.shm.close();
      // Traces of the requests that just drained are written, and the trace file's array closed.
      await this.context.tracing.shutdown().catch((e) => this.log.error(`writing traces: ${(e as Error).message}`));
      return inTime;
    })();
    return this.stopping;
  }
}
