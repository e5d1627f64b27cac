/** A config that parsed but breaks one of Triton's rules: Triton's message plus the field at fault. */
import { InferError } from '../errors.ts';

export class ConfigValidationError extends InferError {
  constructor(
    message: string,
    /** Field path in the config (e.g. `input[0].dims`), '' when the config as a whole is at fault. */
    readonly fieldPath: string = '',
    code: 'INVALID_ARG' | 'INTERNAL' = 'INVALID_ARG',
  ) {
    super(code, message);
    this.name = 'ConfigValidationError';
  }
}

/** Throws a ConfigValidationError (INVALID_ARG). */
export function fail(message: string, fieldPath = ''): never {
  throw new ConfigValidationError(message, fieldPath);
}
