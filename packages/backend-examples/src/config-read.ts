/** Reading a ModelConfig the way Triton's backends read its JSON form (backend_common helpers). */
import { InferError, type ModelConfig, type ModelInput, type ModelOutput } from '@tritium/core';

export function invalidArg(message: string): InferError {
  return new InferError('INVALID_ARG', message);
}

/** `dims`, or `reshape.shape` when the tensor is reshaped (what the backend sees). */
export function backendShape(io: ModelInput | ModelOutput): number[] {
  return io.reshape ? [...io.reshape.shape] : [...io.dims];
}

/** A `parameters` entry's `string_value`, or undefined. */
export function parameter(config: ModelConfig, key: string): string | undefined {
  return config.parameters?.[key]?.string_value;
}

/**
 * An integer parameter as Triton's backends parse it with `std::stoi` (leading digits, optional
 * sign); a value with no leading integer fails the load naming the parameter instead of crashing.
 */
export function intParameter(config: ModelConfig, key: string): number | undefined {
  const raw = parameter(config, key);
  if (raw === undefined) return undefined;
  const m = /^\s*([+-]?\d+)/.exec(raw);
  const value = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(value) || Math.abs(value) > 2 ** 31 - 1) {
    throw invalidArg(`model '${config.name}': parameter '${key}' must be an integer, got '${raw}'`);
  }
  return value;
}
