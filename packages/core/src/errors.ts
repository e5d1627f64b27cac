/**
 * The one error type of Tritium. Codes are Triton's (TRITONSERVER_Error codes); each transport maps
 * them through one table (HTTP status, gRPC status). It crosses worker boundaries as `{code, message}`.
 */
export type ErrorCode =
  | 'UNKNOWN'
  | 'INTERNAL'
  | 'NOT_FOUND'
  | 'INVALID_ARG'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'ALREADY_EXISTS'
  | 'CANCELLED';

export const ERROR_CODES: readonly ErrorCode[] = [
  'UNKNOWN',
  'INTERNAL',
  'NOT_FOUND',
  'INVALID_ARG',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'ALREADY_EXISTS',
  'CANCELLED',
];

/** Plain-data form that survives structuredClone / postMessage. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
}

const BRAND = Symbol.for('@tritium/core/InferError');

export class InferError extends Error {
  readonly code: ErrorCode;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InferError';
    this.code = code;
  }

  /**
   * An InferError without a stack trace, for expected answers given at high rates (a full queue under
   * overload): capturing the stack cost ~8 µs, most of what rejecting a request costs, and nobody
   * reads it.
   */
  static quick(code: ErrorCode, message: string): InferError {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new InferError(code, message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /** True for any InferError, including one built by another copy of this module (workers, versions). */
  static is(value: unknown): value is InferError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message };
  }

  static fromWire(wire: WireError): InferError {
    return new InferError(ERROR_CODES.includes(wire.code) ? wire.code : 'UNKNOWN', wire.message);
  }

  /** Wraps anything thrown into an InferError, keeping an InferError as it is. */
  static from(value: unknown, code: ErrorCode = 'INTERNAL'): InferError {
    if (InferError.is(value)) return value;
    if (value instanceof Error) return new InferError(code, value.message, { cause: value });
    return new InferError(code, String(value));
  }

  /** Same code, message prefixed (e.g. Triton's `in ensemble 'E', `). */
  withPrefix(prefix: string): InferError {
    return new InferError(this.code, prefix + this.message, { cause: this });
  }
}
