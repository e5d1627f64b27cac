/**
 * The error of the config language: a parse (or validation) failure located in a config file.
 * Its message is `file:line:column: message`, the form compilers use, so editors and terminals
 * can jump to the spot; `reason` is the bare message (protobuf's or Triton's wording).
 */
import { InferError } from '../errors.ts';

export interface ConfigErrorLocation {
  /** File name shown in the message; `config.pbtxt` when the text came from elsewhere. */
  readonly file?: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** Dotted path of the field being read, e.g. `dynamic_batching.preferred_batch_size` ('' at top level). */
  readonly fieldPath?: string;
}

export class ConfigError extends InferError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly fieldPath: string;
  /** The message without the `file:line:column: ` prefix. */
  readonly reason: string;

  constructor(reason: string, location: ConfigErrorLocation, options?: ErrorOptions) {
    const file = location.file ?? 'config.pbtxt';
    super('INVALID_ARG', `${file}:${location.line}:${location.column}: ${reason}`, options);
    this.name = 'ConfigError';
    this.file = file;
    this.line = location.line;
    this.column = location.column;
    this.fieldPath = location.fieldPath ?? '';
    this.reason = reason;
  }
}
