import { InferError } from '../errors.ts';
import type { ModelVersionPolicy } from '../config/model-config.ts';

/** A version folder name Triton accepts: numeric, no leading 0 (so `0`, `01`, `v1` are ignored). */
export function parseVersionDirName(name: string): number | undefined {
  if (!/^[1-9][0-9]{0,15}$/.test(name)) return undefined;
  const n = Number(name);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Versions to load under the policy (Triton's default: `latest { num_versions: 1 }`), ascending.
 * `specific` versions that have no folder are skipped; an empty result is Triton's error.
 */
export function selectVersions(modelName: string, policy: ModelVersionPolicy | undefined, available: readonly number[]): number[] {
  const sorted = [...available].sort((a, b) => a - b);
  let chosen: number[];
  if (policy?.all) chosen = sorted;
  else if (policy?.specific) {
    const wanted = new Set(policy.specific.versions.map(Number));
    chosen = sorted.filter((v) => wanted.has(v));
  } else {
    const n = Math.max(1, policy?.latest?.num_versions ?? 1);
    chosen = sorted.slice(Math.max(0, sorted.length - n));
  }
  if (chosen.length === 0) {
    throw new InferError(
      'INVALID_ARG',
      `at least one version must be available under the version policy of model '${modelName}'`,
    );
  }
  return chosen;
}
