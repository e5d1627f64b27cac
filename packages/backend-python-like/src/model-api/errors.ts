import { InferError, type ErrorCode } from '@tritium/core';

/**
 * `pb_utils.TritonError`: put one in an `InferenceResponse` to fail only that request, or throw it
 * from `execute` to fail the whole call with its code. It is an `InferError`, so the server keeps
 * its code and message exactly.
 */
export class TritonError extends InferError {
  static readonly UNKNOWN = 'UNKNOWN' as const;
  static readonly INTERNAL = 'INTERNAL' as const;
  static readonly NOT_FOUND = 'NOT_FOUND' as const;
  static readonly INVALID_ARG = 'INVALID_ARG' as const;
  static readonly UNAVAILABLE = 'UNAVAILABLE' as const;
  static readonly UNSUPPORTED = 'UNSUPPORTED' as const;
  static readonly ALREADY_EXISTS = 'ALREADY_EXISTS' as const;
  static readonly CANCELLED = 'CANCELLED' as const;

  constructor(message: string, code: ErrorCode = 'INTERNAL') {
    super(code, message);
    this.name = 'TritonError';
  }
}

/** `pb_utils.TritonModelException`: thrown from a hook, it fails the call (or the load). */
export const TritonModelException = TritonError;

/** Any thrown value or error-ish field as a TritonError (keeps an InferError's code). */
export function toTritonError(value: unknown, code: ErrorCode = 'INTERNAL'): TritonError {
  if (value instanceof TritonError) return value;
  if (InferError.is(value)) return new TritonError(value.message, value.code);
  if (value instanceof Error) return new TritonError(value.message, code);
  return new TritonError(String(value), code);
}
