/**
 * The running server: the InferenceServer plus the HTTP, gRPC and metrics transports, started
 * and stopped in Triton's order (models first; on shutdown readiness drops, new requests are
 * refused, in-flight ones finish, then the listeners close).
 */
import { inject, injectable } from 'inversify';
import type { InferenceServerApi } from '@tritium/core';
import { TOKENS } from './tokens.ts';
import type { ServeOptions } from './cli/flags.ts';
import type { TritonLog } from './logging/triton-log.ts';
import type { HttpTransport } from './http/http-server.ts';
import type { GrpcTransport } from './grpc/grpc-server.ts';
import type { MetricsTransport } from './metrics/metrics-server.ts';
import type { TransportContext } from './protocol/context.ts';

export interface BoundPorts {
  http?: number;
  grpc?: number;
  metrics?: number;
}

/** An InferenceServer implementation may need starting (core's loads the repositories). */
interface Startable {
  start?(): Promise<void>;
}

@injectable()
export class TritiumServer {
  readonly ports: BoundPorts = {};
  private stopping: Promise<void> | undefined;

  constructor(
    @inject(TOKENS.InferenceServer) readonly api: InferenceServerApi,
    @inject(TOKENS.ServeOptions) private readonly options: ServeOptions,
    @inject(TOKENS.Log) readonly log: TritonLog,
    @inject(TOKENS.TransportContext) readonly context: TransportContext,
    @inject(TOKENS.HttpTransport) private readonly http: HttpTransport,
    @inject(TOKENS.GrpcTransport) private readonly grpc: GrpcTransport,
    @inject(TOKENS.MetricsTransport) private readonly metrics: MetricsTransport,
  ) {}

  /** Loads models, then binds the enabled transports; logs the bound ports in Triton's words. */
  async start(): Promise<BoundPorts> {
    await (this.api as InferenceServerApi & Startable).start?.();
    const o = this.options;
    try {
      if (o.allowGrpc) {
        this.ports.grpc = await this.grpc.start();
        this.log.info(`Started GRPCInferenceService at ${o.grpcAddress}:${this.ports.grpc}`);
      }
      if (o.allowHttp) {
        this.ports.http = await this.http.start();
        this.log.info(`Started HTTPService at ${o.httpAddress}:${this.ports.http}`);
      }
      if (o.allowMetrics) {
        this.ports.metrics = await this.metrics.start();
        this.log.info(`Started Metrics Service at ${o.metricsAddress}:${this.ports.metrics}`);
      }
    } catch (e) {
      await this.stop();
      throw e;
    }
    return this.ports;
  }

  /** Graceful stop within `--exit-timeout-secs` (idempotent). */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const timeoutMs = this.options.exitTimeoutSecs * 1000;
      await this.api.stop({ timeoutMs }).catch((e) => this.log.error(`stopping the inference server: ${(e as Error).message}`));
      await Promise.all([this.http.stop(1000), this.grpc.stop(1000), this.metrics.stop()]);
      this.context.shm.close();
    })();
    return this.stopping;
  }
}
