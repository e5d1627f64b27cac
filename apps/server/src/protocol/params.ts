/**
 * Request parameters the frontend handles itself (Triton's reserved keys, docs/triton-compatibility.md §2): `priority`,
 * `timeout` and the sequence keys (`sequence_id`, `sequence_start`, `sequence_end`) become request
 * fields; `binary_data_output` and `headers` stay with the transport; other `triton_*` keys are
 * rejected; the rest is forwarded to the model.
 */
import type { CorrelationId, ParameterValue, SequenceFlags } from '@tritium/core';
import { invalidArg } from './status.ts';

export const TRITON_RESERVED_MESSAGE =
  "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.";

/** Keys under `triton_` a client may set (gRPC streaming). */
const ALLOWED_TRITON_KEYS = new Set(['triton_enable_empty_final_response']);

export interface LiftedParams {
  readonly parameters: Record<string, ParameterValue>;
  /** Present when the request names any sequence key (the sequence batcher checks the ID). */
  readonly sequence?: SequenceFlags;
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

/**
 * `sequence_id`: an unsigned 64-bit integer or a string (Triton's SequenceId). gRPC sends it as
 * int64_param (a negative one wraps to uint64, as Triton's cast) or string_param; HTTP as a JSON
 * number (non-negative) or string. Each transport refuses anything else with Triton's wording.
 */
function sequenceId(value: unknown, transport: Transport): CorrelationId {
  if (typeof value === 'string') return value;
  if (transport === 'grpc') {
    if (typeof value === 'bigint') return BigInt.asUintN(64, value);
    if (typeof value === 'number' && Number.isSafeInteger(value)) return value < 0 ? BigInt.asUintN(64, BigInt(value)) : value;
    throw invalidArg("invalid value type for 'sequence_id' parameter, expected int64_param or string_param.");
  }
  if (typeof value === 'bigint' && value >= 0n && value <= 0xffffffffffffffffn) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw invalidArg(`Unable to parse 'sequence_id': expected an unsigned 64-bit integer or a string, got ${JSON.stringify(typeof value === 'bigint' ? String(value) : value) ?? String(value)}`);
}

function sequenceFlag(key: 'sequence_start' | 'sequence_end', value: unknown, transport: Transport): boolean {
  if (typeof value === 'boolean') return value;
  throw invalidArg(
    transport === 'grpc'
      ? `invalid value type for '${key}' parameter, expected bool_param.`
      : `Unable to parse '${key}': expected a boolean, got ${JSON.stringify(value) ?? String(value)}`,
  );
}

export type Transport = 'http' | 'grpc';

export function liftParameters(params: Readonly<Record<string, unknown>> | undefined, transport: Transport = 'http'): LiftedParams {
  const parameters: Record<string, ParameterValue> = {};
  let id: CorrelationId | undefined;
  let start: boolean | undefined;
  let end: boolean | undefined;
  let priority: number | undefined;
  let timeoutUs: number | undefined;
  let binaryDataOutput: boolean | undefined;
  let enableEmptyFinalResponse = false;
  for (const [key, value] of Object.entries(params ?? {})) {
    if (key === 'sequence_id') id = sequenceId(value, transport);
    else if (key === 'sequence_start') start = sequenceFlag(key, value, transport);
    else if (key === 'sequence_end') end = sequenceFlag(key, value, transport);
    else if (key === 'priority') priority = asUint(key, value);
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
  const sequence = id !== undefined || start !== undefined || end !== undefined ? { id: id ?? 0, start: start === true, end: end === true } : undefined;
  return { parameters, ...(sequence ? { sequence } : {}), priority, timeoutUs, binaryDataOutput, enableEmptyFinalResponse };
}
