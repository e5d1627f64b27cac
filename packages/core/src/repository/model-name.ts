import { InferError } from '../errors.ts';

/**
 * Refuses a model name that could reach outside its repository folder (Triton's ValidateModelName,
 * plus absolute paths and backslashes, which Triton's POSIX-only check does not need).
 */
export function assertSafeModelName(name: string): void {
  if (name.length === 0) throw new InferError('INVALID_ARG', 'model name must not be empty');
  if (name.trim().length === 0) {
    throw new InferError('INVALID_ARG', 'model name must not contain only whitespace characters');
  }
  if (name.includes('..') || name.includes('/') || name.includes('\\') || name.includes('\0')) {
    throw new InferError(
      'INVALID_ARG',
      `invalid model name '${name}', model name must not contain path traversal characters`,
    );
  }
}
