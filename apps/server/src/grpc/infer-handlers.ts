/** ModelInfer over the hand-written codec (ModelStreamInfer: model-stream.ts). */
import { status as GrpcStatus, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { InferError } from '@tritium/core';
import type { WireInferRequest } from '@tritium/client/proto';
import type { TransportContext } from '../protocol/context.ts';
import { traceNowNs } from '@tritium/core/trace';
import { classified } from '../protocol/classification.ts';
import { DecodeFailure } from './service-definition.ts';
import { fromWireRequest, toWireResponse } from './infer-convert.ts';
import { grpcError, metadataCarrier, safeIsDecoupled } from './call-helpers.ts';

export const DECOUPLED_UNARY_MESSAGE = "ModelInfer RPC doesn't support models with decoupled transaction policy";

export function modelInferHandler(ctx: TransportContext) {
  return (call: ServerUnaryCall<WireInferRequest | DecodeFailure, unknown>, callback: sendUnaryData<unknown>): void => {
    const msg = call.request;
    if (msg instanceof DecodeFailure) {
      callback({ code: GrpcStatus.INVALID_ARGUMENT, details: msg.message });
      return;
    }
    if (ctx.log.options.verbose >= 1) ctx.log.verbose(1, `ModelInferHandler: request for model '${msg.model_name}'`);
    const abort = new AbortController();
    // grpc-js also emits 'cancelled' when a call ends normally; aborting then would build a
    // DOMException for every request (seen at ~2% of the transport's CPU), so only while unanswered.
    let answered = false;
    call.once('cancelled', () => {
      if (!answered) abort.abort();
    });
    let converted;
    try {
      if (safeIsDecoupled(ctx, msg)) {
        throw new InferError('UNSUPPORTED', DECOUPLED_UNARY_MESSAGE);
      }
      converted = fromWireRequest(msg, ctx, abort.signal, () => Object.entries(call.metadata.getMap()));
    } catch (e) {
      callback(grpcError(ctx, 'ModelInfer', e));
      return;
    }
    const { request, outputShm } = converted;
    const sampled = ctx.tracing.sample(request.model, metadataCarrier(call));
    sampled?.capture('GRPC_WAITREAD_END', traceNowNs());
    const send = (error: ReturnType<typeof grpcError> | null, value?: unknown): void => {
      answered = true;
      sampled?.capture('GRPC_SEND_START', traceNowNs());
      callback(error, value);
      sampled?.capture('GRPC_SEND_END', traceNowNs());
      sampled?.done();
    };
    ctx.api.infer(sampled ? { ...request, trace: sampled.trace } : request).then(
      (response) => {
        try {
          send(null, toWireResponse(classified(response, request.outputs, ctx, request.model), outputShm, ctx));
        } catch (e) {
          send(grpcError(ctx, 'ModelInfer', e));
        }
      },
      (e) => send(grpcError(ctx, 'ModelInfer', e)),
    );
  };
}
