/** Correlation IDs (Triton's InferenceRequest::SequenceId): uint64 or string, compared by type and value. */
import type { CorrelationId } from '../../types.ts';

/** True when the ID names a sequence (Triton's InSequence: non-zero, non-empty). */
export function inSequence(id: CorrelationId | undefined): id is CorrelationId {
  if (id === undefined) return false;
  if (typeof id === 'string') return id !== '';
  return typeof id === 'bigint' ? id !== 0n : id !== 0;
}

/** A map key: a uint64 1 and a string "1" are different sequences, as in Triton. */
export function correlationKey(id: CorrelationId): string {
  return typeof id === 'string' ? `s:${id}` : `u:${BigInt(id)}`;
}

/** The ID as Triton prints it in messages (the value, no quotes). */
export function formatCorrelationId(id: CorrelationId): string {
  return typeof id === 'string' ? id : String(BigInt(id));
}

/** The numeric value as an unsigned 64-bit integer (negative int64 wraps, as Triton's cast does). */
export function correlationUint64(id: Exclude<CorrelationId, string>): bigint {
  return BigInt.asUintN(64, BigInt(id));
}
