/**
 * Strict JSON decoding of request bodies, the same on the main thread (small bodies) and in the
 * JSON worker (large ones): valid UTF-8 only, nesting bounded before JSON.parse runs, every failure
 * INVALID_ARG with Triton's "failed to parse the request JSON buffer" wording.
 */
import { parse as parseLossless } from 'lossless-json';
import { invalidArg } from '../protocol/status.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Deepest nesting accepted. Tensor data nests one level per dimension and is refused past 64 levels
 * anyway (tensors.ts); a few more levels hold the request around it. Checked before parsing, because
 * JSON.parse of a deeply nested body costs far more memory and time than its size suggests (10 MB of
 * '[' took 5 s and 750 MB).
 */
export const MAX_JSON_DEPTH = 80;

/** The nesting depth of a JSON text, scanning bytes (strings skipped); stops past `limit`. */
function depthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c) i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      if (++depth > limit) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}

/** Parses JSON bytes strictly (invalid UTF-8, nesting past MAX_JSON_DEPTH and syntax errors are INVALID_ARG). */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw invalidArg('failed to parse the request JSON buffer: The document is not valid UTF-8');
  }
  if (depthExceeds(bytes, MAX_JSON_DEPTH)) {
    throw invalidArg(`failed to parse the request JSON buffer: nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidArg(`failed to parse the request JSON buffer: ${(e as Error).message}`);
  }
}

/** A JSON number's text as a bigint when it is an integer JSON.parse would round, else as a number. */
const exactNumber = (text: string): number | bigint => {
  const n = Number(text);
  return Number.isInteger(n) && !Number.isSafeInteger(n) && /^-?\d+$/.test(text) ? BigInt(text) : n;
};

/**
 * Parses JSON bytes that {@link parseJsonBody} accepted again, keeping integers past 2^53 exact (as
 * bigint): JSON.parse reads 9007199254740993 as ...992, while Triton (rapidjson) reads INT64 and
 * UINT64 `data` exactly. Several times slower than JSON.parse, so only for a body that needs it.
 */
export function parseJsonExactIntegers(bytes: Uint8Array): unknown {
  try {
    return parseLossless(strictUtf8.decode(bytes), null, exactNumber);
  } catch (e) {
    throw invalidArg(`failed to parse the request JSON buffer: ${(e as Error).message}`);
  }
}
