/**
 * One table from Triton's error codes to HTTP and gRPC statuses (Triton's HttpCodeFromError and
 * its gRPC mapping), plus TransportError for limits the transports enforce themselves.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { InferError, type ErrorCode } from '@tritium/core';

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

export interface MappedError {
  readonly httpStatus: number;
  readonly grpcStatus: GrpcStatus;
  readonly message: string;
}

/** Maps anything thrown to a status pair and message; unknown throwables are INTERNAL. */
export function mapError(error: unknown): MappedError {
  if (error instanceof TransportError) {
    return { httpStatus: error.httpStatus, grpcStatus: error.grpcStatus, message: error.message };
  }
  const e = InferError.from(error);
  return { httpStatus: HTTP_STATUS[e.code] ?? 400, grpcStatus: GRPC_STATUS[e.code] ?? GrpcStatus.UNKNOWN, message: e.message };
}

export function invalidArg(message: string): InferError {
  return new InferError('INVALID_ARG', message);
}
