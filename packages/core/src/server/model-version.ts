/**
 * The one grammar of a model version as clients send it (HTTP path, gRPC `model_version`, load and
 * statistics calls): '' means the version the model's policy serves; otherwise a non-negative
 * integer. Triton refuses negative and non-numeric versions with INVALID_ARG as well.
 */
import { InferError } from '../errors.ts';

export function parseModelVersion(version: string | undefined): number | undefined {
  if (version === undefined || version === '') return undefined;
  if (!/^\d+$/.test(version) || !Number.isSafeInteger(Number(version))) {
    throw new InferError('INVALID_ARG', `failed to parse model version '${version}': expected a non-negative integer`);
  }
  return Number(version);
}
