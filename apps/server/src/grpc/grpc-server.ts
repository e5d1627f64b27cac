/**
 * The gRPC transport: `inference.GRPCInferenceService` + `grpc.health.v1.Health` (Check, Watch) on
 * grpc-js, and server reflection (v1, v1alpha) unless `--grpc-reflection=false`.
 * A request message is bounded by `--grpc-max-input-size` (64 MB, compressed or inflated; Triton
 * takes up to INT32_MAX) and charged to the budget HTTP shares (inbound-bytes.ts); responses keep
 * Triton's INT32_MAX.
 */
import { format } from 'node:util';
import {
  Server,
  ServerCredentials,
  setLogger,
  status as GrpcStatus,
  type handleUnaryCall,
  type Metadata,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { GRPCInferenceServiceMethods, UnaryMethod } from '@tritium/client/proto';
import type { TransportContext } from '../protocol/context.ts';
import { mapError } from '../protocol/status.ts';
import { failedRestriction, grpcRestrictedMessage, GRPC_METHOD_CATEGORY, type GrpcMethod, type Restrictions } from '../protocol/restricted.ts';
import { loadTlsMaterial, type TlsOptions } from '../protocol/tls.ts';
import { gracefulStop } from '../protocol/graceful-stop.ts';
import { DecodeFailure, healthServiceDefinition, inferenceServiceDefinition } from './service-definition.ts';
import { HealthService } from './health-service.ts';
import { addReflection } from './reflection.ts';
import { modelInferHandler } from './infer-handlers.ts';
import { modelStreamInferHandler } from './model-stream.ts';
import { UNARY_HANDLERS } from './unary-handlers.ts';
import { StreamDrain } from './stream-drain.ts';
import { inboundBytesInterceptor } from './inbound-bytes.ts';
import { GrpcListener } from './grpc-listener.ts';
import type { RequestBudget } from '../protocol/request-budget.ts';

export interface GrpcTransportOptions {
  readonly address: string;
  readonly port: number;
  /** `--grpc-restricted-protocol`: categories gated behind `triton-grpc-protocol-<key>` metadata. */
  readonly restricted?: Restrictions;
  /** `--grpc-use-ssl` / `--grpc-use-ssl-mutual` (PEM files read at start); insecure when off. */
  readonly tls?: TlsOptions;
  /** Triton's keepalive and connection-age flags, as grpc-js server options. */
  readonly connection?: GrpcConnectionOptions;
  /** `--grpc-max-input-size`: the most bytes one request message may have, on the wire or inflated. */
  readonly maxMessageBytes: number;
  /** `--max-buffered-request-size`: request bytes held at once, shared with HTTP. */
  readonly budget: RequestBudget;
  /** `--grpc-reflection`: server reflection v1 and v1alpha (reflection.ts). */
  readonly reflection: boolean;
  /** `--grpc-health-max-watches`: health Watch streams open at once (health-service.ts). */
  readonly maxHealthWatches: number;
  /** `--grpc-max-connections` (as fitted below the descriptor limit) and `--grpc-first-request-timeout-secs`. */
  readonly connections: { readonly maxConnections: number; readonly firstRequestTimeoutMs: number };
}

/** Triton's `--grpc-keepalive-time`, `--grpc-keepalive-timeout`, `--grpc-max-connection-age[-grace]` (ms; grpc-js defaults when unset). */
export interface GrpcConnectionOptions {
  readonly keepaliveTimeMs?: number;
  readonly keepaliveTimeoutMs?: number;
  readonly maxConnectionAgeMs?: number;
  readonly maxConnectionAgeGraceMs?: number;
}

/** The grpc-js server options Triton's `--grpc-keepalive-*` / `--grpc-max-connection-age*` flags set. */
function connectionOptions(c: GrpcConnectionOptions | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (c?.keepaliveTimeMs !== undefined) out['grpc.keepalive_time_ms'] = c.keepaliveTimeMs;
  if (c?.keepaliveTimeoutMs !== undefined) out['grpc.keepalive_timeout_ms'] = c.keepaliveTimeoutMs;
  if (c?.maxConnectionAgeMs !== undefined) out['grpc.max_connection_age_ms'] = c.maxConnectionAgeMs;
  if (c?.maxConnectionAgeGraceMs !== undefined) out['grpc.max_connection_age_grace_ms'] = c.maxConnectionAgeGraceMs;
  return out;
}

/** A unary call of `M` as grpc-js hands it over: the request decoded (or its DecodeFailure), the response as written. */
type UnaryCall<M extends UnaryMethod> = handleUnaryCall<GRPCInferenceServiceMethods[M]['request'] | DecodeFailure, GRPCInferenceServiceMethods[M]['responseInit']>;

/** Triton's bound on response messages (INT32_MAX). */
const MAX_SEND_MESSAGE = 2147483647;

/** What the restriction gate reads of a streaming call (bidirectional or server-streaming). */
type StreamCall = Pick<ServerWritableStream<unknown, unknown>, 'metadata' | 'emit'>;

export class GrpcTransport {
  private server: Server | undefined;
  private listener: GrpcListener | undefined;
  private boundPort = 0;
  /** Open ModelStreamInfer streams, ended with UNAVAILABLE by a stop (see stream-drain.ts). */
  private readonly streams = new StreamDrain();

  constructor(
    private readonly ctx: TransportContext,
    private readonly options: GrpcTransportOptions,
  ) {}

  get port(): number {
    return this.boundPort;
  }

  /** Connections open now (0 before start). */
  get openConnections(): number {
    return this.listener?.open ?? 0;
  }

  /**
   * Triton's restriction check for `method`'s category: the UNAVAILABLE status a call without the
   * metadata gets before its handler runs; undefined when the category is not restricted.
   */
  private refusal(method: GrpcMethod): ((metadata: Metadata) => { code: GrpcStatus; details: string } | undefined) | undefined {
    const restrictions = this.options.restricted;
    const category = GRPC_METHOD_CATEGORY[method];
    if (!restrictions || !restrictions[category]) return undefined;
    return (metadata) => {
      const failed = failedRestriction(restrictions, category, (name) => {
        const values = metadata.get(name);
        return values.length === 1 ? String(values[0]) : undefined;
      });
      return failed ? { code: GrpcStatus.UNAVAILABLE, details: grpcRestrictedMessage(failed) } : undefined;
    };
  }

  /** A unary handler behind the restriction check of its method: a refused call is answered with the status. */
  private gateUnary<Req, Res>(method: GrpcMethod, handler: handleUnaryCall<Req, Res>): handleUnaryCall<Req, Res> {
    const refuse = this.refusal(method);
    if (!refuse) return handler;
    return (call, callback) => {
      const status = refuse(call.metadata);
      if (status) callback(status);
      else handler(call, callback);
    };
  }

  /**
   * A streaming handler (bidirectional or server-streaming) behind the restriction check of its
   * method: a refused stream ends with the status.
   */
  private gateStream<Call extends StreamCall>(method: GrpcMethod, handler: (call: Call) => void): (call: Call) => void {
    const refuse = this.refusal(method);
    if (!refuse) return handler;
    return (call) => {
      const status = refuse(call.metadata);
      if (status) call.emit('error', status);
      else handler(call);
    };
  }

  /** `method`'s handler (unary-handlers.ts) as grpc-js calls it: failures to decode and errors become statuses. */
  private unary<M extends UnaryMethod>(method: M): UnaryCall<M> {
    const handler = UNARY_HANDLERS[method];
    return (call, respond) => {
      const request = call.request;
      if (request instanceof DecodeFailure) {
        respond({ code: GrpcStatus.INVALID_ARGUMENT, details: request.message });
        return;
      }
      Promise.resolve()
        .then(() => handler(request, this.ctx))
        .then(
          (value) => respond(null, value),
          (e) => {
            const m = mapError(e);
            respond({ code: m.grpcStatus, details: m.message });
          },
        );
    };
  }

  private implementation(): UntypedServiceImplementation {
    const impl: UntypedServiceImplementation = {
      ModelInfer: this.gateUnary('ModelInfer', modelInferHandler(this.ctx)),
      ModelStreamInfer: this.gateStream('ModelStreamInfer', modelStreamInferHandler(this.ctx, this.streams)),
    };
    for (const method of Object.keys(UNARY_HANDLERS) as UnaryMethod[]) impl[method] = this.gateUnary(method, this.unary(method));
    return impl;
  }

  /** Binds and starts; resolves with the bound port (useful with port 0). */
  async start(): Promise<number> {
    // grpc-js writes its own errors to the console (a bare `E No address added out of total 1
    // resolved` beside the bind error it throws); they go to the server's log, at verbose level 1:
    // what matters reaches us as an exception or a call status.
    const toLog = (...args: unknown[]): void => this.ctx.log.verbose(1, `grpc-js: ${format(...args)}`);
    setLogger({ error: toLog, info: toLog, debug: toLog });
    const listener = new GrpcListener({ address: this.options.address, port: this.options.port, ...this.options.connections });
    const inbound = inboundBytesInterceptor(this.options.budget, this.options.maxMessageBytes);
    const server = new Server({
      'grpc.max_receive_message_length': this.options.maxMessageBytes,
      'grpc.max_send_message_length': MAX_SEND_MESSAGE,
      // grpc-js's channelz bookkeeping (on by default) costs every call two Date.now() and four
      // counters, and every connection a registry entry; nothing reads it (no channelz service is
      // served, Triton exposes none).
      'grpc.enable_channelz': 0,
      ...connectionOptions(this.options.connection),
      // One interceptor (each costs every call a layer): it marks the call's connection as used, and
      // bounds its messages, being first and so handed grpc-js's own call (inbound-bytes.ts).
      interceptors: [
        (method, call) => {
          listener.called(call);
          return inbound(method, call);
        },
      ],
    });
    server.addService(inferenceServiceDefinition(), this.implementation());
    const health = new HealthService(() => (this.ctx.api.isReady() ? 'SERVING' : 'NOT_SERVING'), this.options.maxHealthWatches, this.streams);
    server.addService(healthServiceDefinition(), {
      Check: this.gateUnary('Check', (call, callback) => health.check(call, callback)),
      Watch: this.gateStream('Watch', (call: Parameters<HealthService['watch']>[0]) => health.watch(call)),
    });
    if (this.options.reflection) addReflection(server);
    const tls = this.options.tls && loadTlsMaterial('grpc', this.options.tls);
    // Triton's SslServerCredentials: the server's key pair; with mutual TLS the root certificate
    // verifies clients, and a client without a valid certificate fails the handshake.
    const credentials = tls
      ? ServerCredentials.createSsl(tls.mutual ? (tls.ca ?? null) : null, [{ cert_chain: tls.cert, private_key: tls.key }], tls.mutual)
      : ServerCredentials.createInsecure();
    // Our own TCP listener (grpc-listener.ts) hands each connection it accepts to grpc-js.
    try {
      this.boundPort = await listener.listen(server.createConnectionInjector(credentials));
    } catch (e) {
      server.forceShutdown();
      throw e;
    }
    this.server = server;
    this.listener = listener;
    return this.boundPort;
  }

  /**
   * The server is stopping (readiness is down, new inferences get UNAVAILABLE), the listener stays
   * up: each open ModelStreamInfer stream ends with UNAVAILABLE once its requests are answered, so
   * its client reconnects elsewhere instead of being cut when the listener closes.
   */
  drain(): void {
    this.streams.drain();
  }

  /** Stops accepting calls and waits for in-flight ones up to `timeoutMs`, then forces. */
  async stop(timeoutMs = 5000): Promise<void> {
    this.drain();
    const server = this.server;
    const listener = this.listener;
    if (!server || !listener) return;
    this.server = undefined;
    listener.stopAccepting();
    await gracefulStop(
      (done) => server.tryShutdown(() => done()),
      () => server.forceShutdown(),
      timeoutMs,
    );
    await listener.destroyAll();
  }
}
