/**
 * What gRPC request messages hold in memory: each message bounded by `--grpc-max-input-size` while it
 * arrives and while it inflates, and every call's bytes charged to the budget HTTP shares
 * (`--max-buffered-request-size`, protocol/request-budget.ts) as they arrive.
 *
 * Why this reaches into grpc-js: grpc-js reads a call's HTTP/2 stream, buffers each message whole and
 * inflates it (`grpc-encoding: gzip`) before any handler or interceptor sees it (interceptors get the
 * parsed message), and it offers no hook in between; the bytes of a message still arriving and what
 * it inflates to cannot be counted through its public API. A server interceptor is, though, handed
 * grpc-js's own call object (BaseServerInterceptingCall, grpc-js 1.14) when it is the first one, and
 * the interceptor below takes over two steps of that call, for that call only, before it reads a byte:
 * - `decoder.write`, which receives each DATA chunk: the chunk is charged before the decoder keeps it;
 *   a message announcing more than the bound is refused naming the flag (grpc-js answers a throw
 *   there with RESOURCE_EXHAUSTED and drops the stream's further data);
 * - `decompressMessage`: gzip and deflate are inflated by protocol/inflate.ts, charged chunk by chunk
 *   and stopped at the bound (grpc-js's own stops at its bound too, but names no flag and charges
 *   nothing); the compressed bytes are given back once inflated.
 * The alternatives cost more: handling HTTP/2 ourselves means a second gRPC server, and a patched
 * copy of grpc-js is as tied to its internals as this, in a place fewer people read.
 * If a grpc-js release renames these members every call is refused INTERNAL saying so (never served
 * unbounded); apps/server pins grpc-js to 1.14.x, and grpc-bounds.test.ts fails on such a release.
 *
 * A call's bytes are given back when it ends; a stream's requests each give theirs back once
 * answered (`releaseRequestBytes`), so a long stream does not accumulate them.
 */
import { ServerInterceptingCall, status as GrpcStatus, type ServerInterceptor } from '@grpc/grpc-js';
import { inflateWithin, type InflateBound } from '../protocol/inflate.ts';
import type { RequestAccount, RequestBudget } from '../protocol/request-budget.ts';
import { TransportError } from '../protocol/status.ts';

/** The members of grpc-js's BaseServerInterceptingCall this module takes over. */
interface GrpcJsCall {
  decoder: { write(data: Buffer): Buffer[] };
  decompressMessage(message: Buffer, encoding: string): Buffer | Promise<Buffer>;
}

function isGrpcJsCall(call: object): call is GrpcJsCall {
  const c = call as Partial<GrpcJsCall>;
  return typeof c.decompressMessage === 'function' && typeof c.decoder === 'object' && typeof c.decoder?.write === 'function';
}

export const GRPC_INTERNALS_CHANGED =
  'this grpc-js release does not expose the call internals Tritium bounds request messages with (BaseServerInterceptingCall.decoder, decompressMessage); calls are refused until @grpc/grpc-js is 1.14.x';

/** A gRPC status as grpc-js passes it around. */
interface CallStatus {
  code: GrpcStatus;
  details: string;
}

function tooLargeMessage(bytes: number | string, max: number): string {
  return `request message of ${bytes} bytes exceeds the server's maximum input size of ${max} bytes (--grpc-max-input-size)`;
}

function inflatesTooLargeMessage(max: number): string {
  return `request message decompresses to more than the server's maximum input size of ${max} bytes (--grpc-max-input-size)`;
}

/** The stream's requests not yet answered: what each holds, and how to give it back. */
const heldByRequest = new WeakMap<object, () => void>();

/**
 * Gives back what a stream's request message held, once its request is answered (a unary call's
 * are given back when the call ends). Does nothing for a message already given back.
 */
export function releaseRequestBytes(message: object): void {
  const release = heldByRequest.get(message);
  if (!release) return;
  heldByRequest.delete(message);
  release();
}

/** The interceptor (it must be the server's first, to be handed grpc-js's own call). */
export function inboundBytesInterceptor(budget: RequestBudget, maxMessageBytes: number): ServerInterceptor {
  return (_method, call) => {
    if (!isGrpcJsCall(call)) {
      return new ServerInterceptingCall(call, {
        start: () => call.sendStatus({ code: GrpcStatus.INTERNAL, details: GRPC_INTERNALS_CHANGED }),
      });
    }
    const account = budget.account();
    chargeArrivingBytes(call, account, maxMessageBytes);
    inflateWithinBounds(call, account, maxMessageBytes);
    // What the messages delivered so far hold; the rest of account.held belongs to the next one.
    let delivered = 0;
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMessage: (message: unknown, nextMessage) => {
            const bytes = account.held - delivered;
            delivered += bytes;
            if (typeof message === 'object' && message !== null) {
              heldByRequest.set(message, () => {
                account.give(bytes);
                delivered -= bytes;
              });
            }
            nextMessage(message);
          },
          // grpc-js calls this once when the call ends, however it ends (answered, failed, cancelled).
          onCancel: () => account.release(),
        }),
      sendStatus: (status, nextStatus) => {
        account.release();
        nextStatus(status);
      },
    });
  };
}

/** Each DATA chunk is charged before grpc-js's decoder keeps it; a throw ends the call RESOURCE_EXHAUSTED. */
function chargeArrivingBytes(call: GrpcJsCall, account: RequestAccount, maxMessageBytes: number): void {
  const decoder = call.decoder;
  const write = decoder.write.bind(decoder);
  decoder.write = (data: Buffer): Buffer[] => {
    account.take(data.length);
    try {
      return write(data);
    } catch (e) {
      // grpc-js's decoder refuses a length prefix past max_receive_message_length: "Received message
      // larger than max (<n> vs <max>)".
      const announced = /larger than max \((\d+)/.exec((e as Error).message)?.[1];
      throw new Error(announced ? tooLargeMessage(announced, maxMessageBytes) : (e as Error).message);
    }
  };
}

/** Inflates compressed messages within the bound and the budget (grpc-js sends the rejection as the call's status). */
function inflateWithinBounds(call: GrpcJsCall, account: RequestAccount, maxMessageBytes: number): void {
  call.decompressMessage = (message: Buffer, encoding: string): Buffer | Promise<Buffer> => {
    const contents = message.subarray(5);
    if (encoding === 'identity') return contents;
    if (encoding !== 'gzip' && encoding !== 'deflate') {
      return Promise.reject<Buffer>({ code: GrpcStatus.UNIMPLEMENTED, details: `Received message compressed with unsupported encoding "${encoding}"` } satisfies CallStatus);
    }
    const bound: InflateBound = {
      maxBytes: maxMessageBytes,
      tooLarge: () => new TransportError(inflatesTooLargeMessage(maxMessageBytes), 413),
      corrupt: (reason) => new Error(`failed to decompress the request message (${encoding}): ${reason}`),
    };
    return inflateWithin(contents, encoding, bound, account).then(
      (inflated) => {
        account.give(message.length);
        return inflated;
      },
      (e: Error) => {
        const status: CallStatus = { code: e instanceof TransportError ? GrpcStatus.RESOURCE_EXHAUSTED : GrpcStatus.INTERNAL, details: e.message };
        throw status;
      },
    );
  };
}
