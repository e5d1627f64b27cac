/**
 * The gRPC transport: `inference.GRPCInferenceService` + `grpc.health.v1.Health` on grpc-js.
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
  type Metadata,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { TransportContext } from '../protocol/context.ts';
import { mapError } from '../protocol/status.ts';
import { failedRestriction, grpcRestrictedMessage, GRPC_METHOD_CATEGORY, type Restrictions } from '../protocol/restricted.ts';
import { loadTlsMaterial, type TlsOptions } from '../protocol/tls.ts';
import { gracefulStop } from '../protocol/graceful-stop.ts';
import { DecodeFailure, healthServiceDefinition, inferenceServiceDefinition } from './service-definition.ts';
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

type AnyCall = { metadata: Metadata; emit(event: 'error', e: unknown): boolean };
type AnyHandler = (call: AnyCall, callback?: (err: unknown, value?: unknown) => void) => void;

/** Triton's bound on response messages (INT32_MAX). */
const MAX_SEND_MESSAGE = 2147483647;

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
   * Wraps a handler with Triton's restriction check for its method's category: a call without the
   * metadata gets UNAVAILABLE before the handler runs (a stream ends with that status).
   */
  private gate(method: string, handler: AnyHandler): UntypedHandleCall {
    const restrictions = this.options.restricted;
    const category = GRPC_METHOD_CATEGORY[method];
    if (!restrictions || !category || !restrictions[category]) return handler as UntypedHandleCall;
    return ((call: AnyCall, callback?: (err: unknown, value?: unknown) => void) => {
      const failed = failedRestriction(restrictions, category, (name) => {
        const values = call.metadata.get(name);
        return values.length === 1 ? String(values[0]) : undefined;
      });
      if (!failed) return handler(call, callback);
      const status = { code: GrpcStatus.UNAVAILABLE, details: grpcRestrictedMessage(failed) };
      if (callback) callback(status);
      else call.emit('error', status);
    }) as UntypedHandleCall;
  }

  private implementation(): UntypedServiceImplementation {
    const impl: UntypedServiceImplementation = {
      ModelInfer: this.gate('ModelInfer', modelInferHandler(this.ctx) as unknown as AnyHandler),
      ModelStreamInfer: this.gate('ModelStreamInfer', modelStreamInferHandler(this.ctx, this.streams) as unknown as AnyHandler),
    };
    for (const [name, handler] of Object.entries(UNARY_HANDLERS)) {
      impl[name] = this.gate(name, (call, callback) => {
        const respond = callback!;
        const request = (call as unknown as { request: unknown }).request;
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
      });
    }
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
    server.addService(healthServiceDefinition(), {
      Check: this.gate('Check', (_call, callback) => {
        callback!(null, { status: this.ctx.api.isReady() ? 'SERVING' : 'NOT_SERVING' });
      }),
    });
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
    listener.destroyAll();
  }
}
