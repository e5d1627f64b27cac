import type { ErrorCode } from '../errors.ts';

/** Triton's Status::CodeString, used in its log lines (`failed to load 'm' version 1: Invalid argument: ...`). */
const CODE_TEXT: Readonly<Record<ErrorCode, string>> = {
  UNKNOWN: 'Unknown',
  INTERNAL: 'Internal',
  NOT_FOUND: 'Not found',
  INVALID_ARG: 'Invalid argument',
  UNAVAILABLE: 'Unavailable',
  UNSUPPORTED: 'Unsupported',
  ALREADY_EXISTS: 'Already exists',
  CANCELLED: 'Cancelled',
};

export function statusText(code: ErrorCode): string {
  return CODE_TEXT[code];
}
