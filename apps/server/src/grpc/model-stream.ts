/**
 * ModelStreamInfer: each request on the stream runs independently; responses are written as they
 * come. Errors go in `error_message` (the stream stays open) unless the client sent
 * `triton_grpc_error: true`, then the stream ends with the gRPC status. Every response carries
 * `triton_final_response`. Once the server stops (`drain`), the stream ends with UNAVAILABLE as soon
 * as its requests are answered.
 *
 * A client that reads slower than its models answer is pushed back (protocol/stream-queue.ts): past
 * `--stream-max-queued-size` bytes unread, a response's producer waits (a decoupled model's sender,
 * through the worker) and no new request is read; held there for `--stream-stall-timeout-secs`, the
 * stream ends RESOURCE_EXHAUSTED and its requests are cancelled.
 */
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { InferError, type InferResponse } from '@tritium/core';
import { traceNowNs } from '@tritium/core/trace';
import { encodeStreamResponse, type WireInferRequest, type WireStreamResponse } from '@tritium/client/proto';
import type { TransportContext } from '../protocol/context.ts';
import { logServerFault, mapError } from '../protocol/status.ts';
import { classified } from '../protocol/classification.ts';
import { StreamQueue } from '../protocol/stream-queue.ts';
import { DecodeFailure } from './service-definition.ts';
import { fromWireRequest, toWireResponse } from './infer-convert.ts';
import { STREAM_STOPPING_MESSAGE, type StreamDrain } from './stream-drain.ts';
import { releaseRequestBytes } from './inbound-bytes.ts';
import { grpcError, metadataCarrier, safeIsDecoupled } from './call-helpers.ts';

/** The call as the handler sees it: requests decoded by the codec, responses written encoded (their size counted). */
export type ModelStreamCall = ServerDuplexStream<WireInferRequest | DecodeFailure, Buffer>;

export function modelStreamInferHandler(ctx: TransportContext, drain: StreamDrain) {
  return (call: ModelStreamCall): void => void new ModelStream(ctx, drain, call);
}

class ModelStream {
  private readonly grpcErrorMode: boolean;
  private readonly aborts = new Set<AbortController>();
  private readonly queue: StreamQueue;
  private pending = 0;
  private ended = false;
  private closed = false;
  private stopping = false;
  private untrack: () => void = () => undefined;

  constructor(
    private readonly ctx: TransportContext,
    drain: StreamDrain,
    private readonly call: ModelStreamCall,
  ) {
    this.grpcErrorMode = call.metadata.get('triton_grpc_error').some((v) => String(v).toLowerCase() === 'true');
    this.queue = new StreamQueue(ctx.streams, (error) => this.endWith(error));
    this.untrack = drain.track(() => {
      this.stopping = true;
      this.finishIfDone();
    });
    call.on('data', (msg: WireInferRequest | DecodeFailure) => this.onRequest(msg));
    call.on('end', () => {
      this.ended = true;
      this.finishIfDone();
    });
    call.on('cancelled', () => this.gone());
    call.on('error', () => this.gone());
  }

  /**
   * Writes one response message. Returns a promise while the client is behind (see StreamQueue); no
   * new request is read until it resolves.
   */
  private write(message: WireStreamResponse): Promise<void> | undefined {
    const bytes = encodeStreamResponse(message);
    this.call.write(bytes, () => this.queue.sent(bytes.length));
    const wait = this.queue.wrote(bytes.length);
    if (wait) {
      this.call.pause();
      void wait.then(() => {
        if (!this.closed) this.call.resume();
      });
    }
    return wait;
  }

  private onRequest(msg: WireInferRequest | DecodeFailure): void {
    if (this.closed) return;
    if (msg instanceof DecodeFailure) {
      releaseRequestBytes(msg);
      this.fail(new InferError('INVALID_ARG', msg.message));
      return;
    }
    const { ctx, call } = this;
    let converted;
    const abort = new AbortController();
    try {
      converted = fromWireRequest(msg, ctx, abort.signal, () => Object.entries(call.metadata.getMap()));
    } catch (e) {
      releaseRequestBytes(msg);
      this.fail(e, msg.id);
      return;
    }
    const { request, outputShm, lifted } = converted;
    this.aborts.add(abort);
    this.pending++;
    let last: InferResponse | undefined;
    const decoupled = safeIsDecoupled(ctx, msg);
    const sampled = ctx.tracing.sample(request.model, metadataCarrier(call));
    sampled?.capture('GRPC_WAITREAD_END', traceNowNs());
    ctx.api.inferStream(sampled ? { ...request, trace: sampled.trace } : request, {
      response: (r) => {
        if (this.closed) return;
        try {
          last = r;
          const out = classified(r, request.outputs, ctx, request.model);
          return this.write({ error_message: '', infer_response: toWireResponse(out, outputShm, ctx, { triton_final_response: !decoupled }) });
        } catch (e) {
          this.fail(e, r.id);
        }
      },
      complete: (error) => {
        // The request's message bytes count against --max-buffered-request-size until it is answered.
        releaseRequestBytes(msg);
        sampled?.capture('INFER_RESPONSE_COMPLETE', traceNowNs());
        sampled?.done();
        this.aborts.delete(abort);
        this.pending--;
        if (error) this.fail(error, request.id);
        else if (decoupled && lifted.enableEmptyFinalResponse && !this.closed) {
          this.write({
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
        this.finishIfDone();
      },
    });
  }

  /** A request failed: an `error_message` response, or the stream's end in triton_grpc_error mode. */
  private fail(error: unknown, id = ''): void {
    if (this.closed) return;
    if (this.grpcErrorMode) {
      this.endWith(error);
      return;
    }
    const m = mapError(error);
    logServerFault(this.ctx.log, 'gRPC ModelStreamInfer', m);
    this.write({ error_message: m.message, infer_response: id ? emptyResponse(id) : undefined });
  }

  /** Ends the stream with `error`'s status, cancelling the requests it still carries. */
  private endWith(error: unknown): void {
    if (this.closed) return;
    this.gone();
    this.call.emit('error', grpcError(this.ctx, 'ModelStreamInfer', error));
  }

  private finishIfDone(): void {
    if (this.closed || this.pending > 0) return;
    if (this.ended) {
      this.closed = true;
      this.untrack();
      this.queue.close();
      this.call.end();
    } else if (this.stopping) {
      this.closed = true;
      this.queue.close();
      this.call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: STREAM_STOPPING_MESSAGE });
    }
  }

  /** The stream is over for us (cancelled, reset, ended with an error): its requests are cancelled. */
  private gone(): void {
    this.closed = true;
    this.untrack();
    this.queue.close();
    for (const a of this.aborts) a.abort();
  }
}

function emptyResponse(id: string) {
  return { model_name: '', model_version: '', id, parameters: {}, outputs: [], raw_output_contents: [] };
}
