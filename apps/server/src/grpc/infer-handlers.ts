/** ModelInfer and ModelStreamInfer over the hand-written codec. */
import { status as GrpcStatus, type sendUnaryData, type ServerDuplexStream, type ServerUnaryCall } from '@grpc/grpc-js';
import { InferError, type InferResponse } from '@tritium/core';
import type { WireInferRequest, WireStreamResponse } from '@tritium/client/proto';
import type { TransportContext } from '../protocol/context.ts';
import { logServerFault, mapError } from '../protocol/status.ts';
import { traceNowNs } from '@tritium/core';
import { classified } from '../protocol/classification.ts';
import { DecodeFailure } from './service-definition.ts';
import { fromWireRequest, toWireResponse } from './infer-convert.ts';
import { STREAM_STOPPING_MESSAGE, type StreamDrain } from './stream-drain.ts';
import { releaseRequestBytes } from './inbound-bytes.ts';

export const DECOUPLED_UNARY_MESSAGE = "ModelInfer RPC doesn't support models with decoupled transaction policy";

/** The gRPC status of an error, logged as HTTP logs it when it is the server's fault (see logServerFault). */
function grpcError(ctx: TransportContext, rpc: string, error: unknown): { code: GrpcStatus; details: string } {
  const m = mapError(error);
  logServerFault(ctx.log, `gRPC ${rpc}`, m);
  return { code: m.grpcStatus, details: m.message };
}

/** The W3C trace context from the call's metadata (gRPC keys are lower case already). */
function metadataCarrier(call: { metadata: { get(key: string): unknown[] } }): (name: string) => string | undefined {
  return (name) => {
    const v = call.metadata.get(name)[0];
    return v === undefined ? undefined : String(v);
  };
}

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

/**
 * Each request on the stream runs independently; responses are written as they come. Errors go in
 * `error_message` (the stream stays open) unless the client sent `triton_grpc_error: true`, then
 * the stream ends with the gRPC status. Every response carries `triton_final_response`. Once the
 * server stops (`drain`), the stream ends with UNAVAILABLE as soon as its requests are answered.
 */
export function modelStreamInferHandler(ctx: TransportContext, drain: StreamDrain) {
  return (call: ServerDuplexStream<WireInferRequest | DecodeFailure, WireStreamResponse>): void => {
    const grpcErrorMode = call.metadata.get('triton_grpc_error').some((v) => String(v).toLowerCase() === 'true');
    const aborts = new Set<AbortController>();
    let pending = 0;
    let ended = false;
    let closed = false;
    let stopping = false;
    let untrack = (): void => undefined;
    const finishIfDone = () => {
      if (closed || pending > 0) return;
      if (ended) {
        closed = true;
        untrack();
        call.end();
      } else if (stopping) {
        closed = true;
        call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: STREAM_STOPPING_MESSAGE });
      }
    };
    untrack = drain.track(() => {
      stopping = true;
      finishIfDone();
    });
    const fail = (error: unknown, id = '') => {
      if (closed) return;
      if (grpcErrorMode) {
        closed = true;
        untrack();
        for (const a of aborts) a.abort();
        call.emit('error', grpcError(ctx, 'ModelStreamInfer', error));
        return;
      }
      const m = mapError(error);
      logServerFault(ctx.log, 'gRPC ModelStreamInfer', m);
      call.write({ error_message: m.message, infer_response: id ? emptyResponse(id) : undefined });
    };
    call.on('data', (msg: WireInferRequest | DecodeFailure) => {
      if (closed) return;
      if (msg instanceof DecodeFailure) {
        releaseRequestBytes(msg);
        fail(new InferError('INVALID_ARG', msg.message));
        return;
      }
      let converted;
      const abort = new AbortController();
      try {
        converted = fromWireRequest(msg, ctx, abort.signal, () => Object.entries(call.metadata.getMap()));
      } catch (e) {
        releaseRequestBytes(msg);
        fail(e, msg.id);
        return;
      }
      const { request, outputShm, lifted } = converted;
      aborts.add(abort);
      pending++;
      let last: InferResponse | undefined;
      const decoupled = safeIsDecoupled(ctx, msg);
      const sampled = ctx.tracing.sample(request.model, metadataCarrier(call));
      sampled?.capture('GRPC_WAITREAD_END', traceNowNs());
      ctx.api.inferStream(sampled ? { ...request, trace: sampled.trace } : request, {
        response: (r) => {
          if (closed) return;
          try {
            last = r;
            const out = classified(r, request.outputs, ctx, request.model);
            call.write({ error_message: '', infer_response: toWireResponse(out, outputShm, ctx, { triton_final_response: !decoupled }) });
          } catch (e) {
            fail(e, r.id);
          }
        },
        complete: (error) => {
          // The request's message bytes count against --max-buffered-request-size until it is answered.
          releaseRequestBytes(msg);
          sampled?.capture('INFER_RESPONSE_COMPLETE', traceNowNs());
          sampled?.done();
          aborts.delete(abort);
          pending--;
          if (error) fail(error, request.id);
          else if (decoupled && lifted.enableEmptyFinalResponse && !closed) {
            call.write({
              error_message: '',
              infer_response: {
                model_name: request.model,
                model_version: String(last?.version ?? request.version ?? ''),
                id: request.id,
                parameters: { triton_final_response: true },
                outputs: [],
                raw_output_contents: [],
              },
            });
          }
          finishIfDone();
        },
      });
    });
    call.on('end', () => {
      ended = true;
      finishIfDone();
    });
    call.on('cancelled', () => {
      closed = true;
      untrack();
      for (const a of aborts) a.abort();
    });
    call.on('error', () => {
      closed = true;
      untrack();
      for (const a of aborts) a.abort();
    });
  };
}

function safeIsDecoupled(ctx: TransportContext, msg: WireInferRequest): boolean {
  try {
    return ctx.api.isDecoupled(msg.model_name, msg.model_version || undefined);
  } catch {
    return false;
  }
}

function emptyResponse(id: string) {
  return { model_name: '', model_version: '', id, parameters: {}, outputs: [], raw_output_contents: [] };
}
