/**
 * The gRPC transport: `inference.GRPCInferenceService` + `grpc.health.v1.Health` on grpc-js.
 * Message size limits are INT32_MAX as Triton's; `--http-max-input-size` does not apply here, the
 * element limit does.
 */
import { format } from 'node:util';
import { Server, ServerCredentials, setLogger, status as GrpcStatus, type UntypedHandleCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { TransportContext } from '../protocol/context.ts';
import { mapError } from '../protocol/status.ts';
import { DecodeFailure, healthServiceDefinition, inferenceServiceDefinition } from './service-definition.ts';
import { modelInferHandler, modelStreamInferHandler } from './infer-handlers.ts';
import { UNARY_HANDLERS } from './unary-handlers.ts';

export interface GrpcTransportOptions {
  readonly address: string;
  readonly port: number;
}

const MAX_MESSAGE = 2147483647;

export class GrpcTransport {
  private server: Server | undefined;
  private boundPort = 0;

  constructor(
    private readonly ctx: TransportContext,
    private readonly options: GrpcTransportOptions,
  ) {}

  get port(): number {
    return this.boundPort;
  }

  private implementation(): UntypedServiceImplementation {
    const impl: UntypedServiceImplementation = {
      ModelInfer: modelInferHandler(this.ctx),
      ModelStreamInfer: modelStreamInferHandler(this.ctx),
    };
    for (const [name, handler] of Object.entries(UNARY_HANDLERS)) {
      impl[name] = ((call: { request: unknown }, callback: (err: unknown, value?: unknown) => void) => {
        if (call.request instanceof DecodeFailure) {
          callback({ code: GrpcStatus.INVALID_ARGUMENT, details: call.request.message });
          return;
        }
        Promise.resolve()
          .then(() => handler(call.request, this.ctx))
          .then(
            (value) => callback(null, value),
            (e) => {
              const m = mapError(e);
              callback({ code: m.grpcStatus, details: m.message });
            },
          );
      }) as UntypedHandleCall;
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
    const server = new Server({
      'grpc.max_receive_message_length': MAX_MESSAGE,
      'grpc.max_send_message_length': MAX_MESSAGE,
    });
    server.addService(inferenceServiceDefinition(), this.implementation());
    server.addService(healthServiceDefinition(), {
      Check: ((_call: unknown, callback: (err: unknown, value?: unknown) => void) => {
        callback(null, { status: this.ctx.api.isReady() ? 'SERVING' : 'NOT_SERVING' });
      }) as UntypedHandleCall,
    });
    const host = this.options.address.includes(':') ? `[${this.options.address}]` : this.options.address;
    this.boundPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${this.options.port}`, ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(err) : resolve(port),
      ),
    );
    this.server = server;
    return this.boundPort;
  }

  /** Stops accepting calls and waits for in-flight ones up to `timeoutMs`, then forces. */
  async stop(timeoutMs = 5000): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, timeoutMs);
      timer.unref();
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
