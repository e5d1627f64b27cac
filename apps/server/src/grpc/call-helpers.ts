/** What ModelInfer and ModelStreamInfer share: error statuses, trace context, the decoupled check. */
import type { status as GrpcStatus } from '@grpc/grpc-js';
import type { WireInferRequest } from '@tritium/client/proto';
import type { TransportContext } from '../protocol/context.ts';
import { logServerFault, mapError } from '../protocol/status.ts';

/** The gRPC status of an error, logged as HTTP logs it when it is the server's fault (see logServerFault). */
export function grpcError(ctx: TransportContext, rpc: string, error: unknown): { code: GrpcStatus; details: string } {
  const m = mapError(error);
  logServerFault(ctx.log, `gRPC ${rpc}`, m);
  return { code: m.grpcStatus, details: m.message };
}

/** The W3C trace context from the call's metadata (gRPC keys are lower case already). */
export function metadataCarrier(call: { metadata: { get(key: string): unknown[] } }): (name: string) => string | undefined {
  return (name) => {
    const v = call.metadata.get(name)[0];
    return v === undefined ? undefined : String(v);
  };
}

/** Whether the request's model is decoupled; false when it cannot be told (the request then fails on its own). */
export function safeIsDecoupled(ctx: TransportContext, msg: WireInferRequest): boolean {
  try {
    return ctx.api.isDecoupled(msg.model_name, msg.model_version || undefined);
  } catch {
    return false;
  }
}
