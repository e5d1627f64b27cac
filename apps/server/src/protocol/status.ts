/**
 * One table from Triton's error codes to HTTP and gRPC statuses (Triton's HttpCodeFromError and
 * its gRPC mapping), plus TransportError for limits the transports enforce themselves.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { InferError, type ErrorCode } from '@tritium/core';
import { redactServerPaths } from './server-paths.ts';

const HTTP_STATUS: Record<ErrorCode, number> = {
  INTERNAL: 500,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  UNKNOWN: 400,
  INVALID_ARG: 400,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
};

const GRPC_STATUS: Record<ErrorCode, GrpcStatus> = {
  UNKNOWN: GrpcStatus.UNKNOWN,
  INTERNAL: GrpcStatus.INTERNAL,
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  INVALID_ARG: GrpcStatus.INVALID_ARGUMENT,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  UNSUPPORTED: GrpcStatus.UNIMPLEMENTED,
  ALREADY_EXISTS: GrpcStatus.ALREADY_EXISTS,
  CANCELLED: GrpcStatus.CANCELLED,
};

/** A limit breached (request too large, too many elements/headers): HTTP 413/400, gRPC RESOURCE_EXHAUSTED. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number,
    readonly grpcStatus: GrpcStatus = GrpcStatus.RESOURCE_EXHAUSTED,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/**
 * The longest error message either transport sends. An error may echo client input (a model name, a
 * shape): sent whole, a 200 KB message overflowed the grpc-message trailer past what HTTP/2 clients
 * accept (grpc-js and gRPC C-core start refusing metadata at 8 KB), so the call never got its status
 * and the channel's other calls hung. Counted as percent-encoded bytes (how grpc-message travels), so
 * the trailer stays under 8 KB whatever the characters.
 */
export const MAX_ERROR_MESSAGE_BYTES = 4096;

/** A message within MAX_ERROR_MESSAGE_BYTES, its cut marked as `... [error message cut: N of M bytes shown]`. */
export function capErrorMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_BYTES / 3) return message;
  let cost = 0;
  let end = 0;
  for (const ch of message) {
    const code = ch.codePointAt(0)!;
    // grpc-js percent-encodes every byte outside printable ASCII, and '%' itself.
    const c = code >= 0x20 && code <= 0x7e && code !== 0x25 ? 1 : 3 * Buffer.byteLength(ch);
    if (cost + c > MAX_ERROR_MESSAGE_BYTES - 64) break;
    cost += c;
    end += ch.length;
  }
  if (end === message.length) return message;
  const shown = Buffer.byteLength(message.slice(0, end));
  return `${message.slice(0, end)}... [error message cut: ${shown} of ${Buffer.byteLength(message)} bytes shown]`;
}

export interface MappedError {
  readonly httpStatus: number;
  readonly grpcStatus: GrpcStatus;
  readonly message: string;
}

/**
 * Maps anything thrown to a status pair and message (server paths redacted, see server-paths.ts;
 * capped, see capErrorMessage); unknown throwables are INTERNAL. Both transports send every error
 * through here.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof TransportError) {
    return { httpStatus: error.httpStatus, grpcStatus: error.grpcStatus, message: capErrorMessage(redactServerPaths(error.message)) };
  }
  const e = InferError.from(error);
  return {
    httpStatus: HTTP_STATUS[e.code] ?? 400,
    grpcStatus: GRPC_STATUS[e.code] ?? GrpcStatus.UNKNOWN,
    message: capErrorMessage(redactServerPaths(e.message)),
  };
}

export function invalidArg(message: string): InferError {
  return new InferError('INVALID_ARG', message);
}

/**
 * A load API parameter other than `config` and `file:<path>` (HTTP and gRPC alike), in Triton's gRPC
 * words. It was ignored, so a misspelt `confg` loaded the model from disk without the override and
 * answered success.
 */
export function unrecognizedLoadParameter(key: string): InferError {
  return invalidArg(`unrecognized load parameter '${key}'.`);
}

/**
 * Logs an error the server answered with when it is the server's fault (HTTP 500 and the other 5xx
 * but 501/503: a backend failure such as an ONNX Runtime error), the same way for HTTP and gRPC, so
 * an operator sees it whichever protocol the client used. Client errors are not logged.
 */
export function logServerFault(log: { error(message: string): void }, where: string, m: MappedError): void {
  if (m.httpStatus >= 500 && m.httpStatus !== 501 && m.httpStatus !== 503) log.error(`${where}: ${m.message}`);
}
