/**
 * Triton's `--http-header-forward-pattern` / `--grpc-header-forward-pattern`: request headers (gRPC
 * metadata) whose name the pattern matches anywhere (RE2's PartialMatch) become string parameters of
 * the inference request, so a `model.ts` sees e.g. `x-user-id`. Triton's reserved parameter keys and
 * `triton_*` names are refused with its message rather than forwarded. Header names are matched as
 * the transports deliver them: lowercase (Node's HTTP parser and HTTP/2 both lowercase them).
 */
import type { InferRequest, ParameterValue } from '@tritium/core';
import { invalidArg } from './status.ts';

/** Triton's kReservedParameterKeys (common.h): never forwarded from a header. */
export const RESERVED_PARAMETER_KEYS: ReadonlySet<string> = new Set([
  'sequence_id',
  'sequence_start',
  'sequence_end',
  'priority',
  'timeout',
  'headers',
  'binary_data_output',
]);

/** The request with every header `pattern` matches added to its parameters (the request itself when none). */
export function forwardHeaders(request: InferRequest, pattern: RegExp | undefined, headers: () => Iterable<readonly [string, unknown]>): InferRequest {
  if (!pattern) return request;
  let parameters: Record<string, ParameterValue> | undefined;
  for (const [key, value] of headers()) {
    if (value === undefined || !pattern.test(key)) continue;
    if (RESERVED_PARAMETER_KEYS.has(key) || key.startsWith('triton_')) {
      throw invalidArg(`Header '${key}' is reserved for Triton usage and cannot be forwarded.`);
    }
    const text = Array.isArray(value) ? value.join(', ') : value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : String(value);
    (parameters ??= { ...request.parameters })[key] = text;
  }
  return parameters ? { ...request, parameters } : request;
}

/** Compiles a forward pattern from the command line (Triton's RE2 syntax is, for such patterns, JavaScript's). */
export function headerForwardPattern(flag: string, source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (e) {
    throw new Error(`invalid value for --${flag}: '${source}' (${(e as Error).message})`);
  }
}
