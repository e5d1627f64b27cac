/**
 * Request parameters the frontend handles itself (Triton's reserved keys, §2.1/§3.1): `priority`
 * and `timeout` become request fields; `binary_data_output` and `headers` stay with the transport;
 * other `triton_*` keys are rejected; the rest is forwarded to the model.
 */
import type { ParameterValue } from '@tritium/core';
import { invalidArg } from './status.ts';

export const TRITON_RESERVED_MESSAGE =
  "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.";

/** Keys under `triton_` a client may set (gRPC streaming). */
const ALLOWED_TRITON_KEYS = new Set(['triton_enable_empty_final_response']);

export interface LiftedParams {
  readonly parameters: Record<string, ParameterValue>;
  readonly priority?: number;
  readonly timeoutUs?: number;
  readonly binaryDataOutput?: boolean;
  readonly enableEmptyFinalResponse: boolean;
}

function asUint(key: string, value: unknown): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw invalidArg(`invalid value type for '${key}' parameter, expected an unsigned integer, got ${JSON.stringify(String(value))}`);
  }
  return n;
}

export function liftParameters(params: Readonly<Record<string, unknown>> | undefined): LiftedParams {
  const parameters: Record<string, ParameterValue> = {};
  let priority: number | undefined;
  let timeoutUs: number | undefined;
  let binaryDataOutput: boolean | undefined;
  let enableEmptyFinalResponse = false;
  for (const [key, value] of Object.entries(params ?? {})) {
    if (key === 'priority') priority = asUint(key, value);
    else if (key === 'timeout') timeoutUs = asUint(key, value);
    else if (key === 'binary_data_output') binaryDataOutput = value === true;
    else if (key === 'headers') continue;
    else if (key.startsWith('triton_')) {
      if (!ALLOWED_TRITON_KEYS.has(key)) throw invalidArg(TRITON_RESERVED_MESSAGE);
      enableEmptyFinalResponse = value === true;
    } else if (
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      typeof value === 'bigint'
    ) {
      parameters[key] = value;
    } else {
      throw invalidArg(`parameter '${key}' has an unsupported value type; expected a string, number or boolean`);
    }
  }
  return { parameters, priority, timeoutUs, binaryDataOutput, enableEmptyFinalResponse };
}
