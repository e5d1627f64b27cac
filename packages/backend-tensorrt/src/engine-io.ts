/**
 * Finding a version's engine file and reading its signature through the shim (main thread: auto-
 * complete and load-time validation need it before any instance exists, as in Triton, which
 * deserializes the engine for both).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { InferError, type ModelConfig } from '@tritium/core';
import { TrtShim, type EngineInfo, type EngineTensor } from './binding.ts';

/** The default model file name of the TensorRT backend. */
export const DEFAULT_MODEL_FILENAME = 'model.plan';

/** The engine file of a version folder; UNAVAILABLE with Triton's message when it is missing. */
export async function resolveEnginePath(config: Pick<ModelConfig, 'name' | 'default_model_filename'>, versionDir: string): Promise<string> {
  const path = join(versionDir, config.default_model_filename || DEFAULT_MODEL_FILENAME);
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) throw new InferError('UNAVAILABLE', `unable to find '${path}' for model instance '${config.name}'`);
  return path;
}

/** Deserializes the engine at `path` with the shim at `shimPath`, returns its signature, frees it. */
export async function readEngineInfo(shimPath: string, path: string, modelName: string, device = 0): Promise<EngineInfo> {
  const shim = TrtShim.load(shimPath);
  const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => {
    throw new InferError('UNAVAILABLE', `failed to load model '${modelName}': cannot read '${path}': ${err.message}`);
  });
  let engine;
  try {
    engine = shim.deserialize(bytes, device);
  } catch (err) {
    throw new InferError('INVALID_ARG', `unable to load model '${modelName}': cannot deserialize TensorRT engine '${path}': ${(err as Error).message}`);
  }
  try {
    return engine.info();
  } finally {
    engine.destroy();
  }
}

export const inputsOf = (info: EngineInfo): EngineTensor[] => info.tensors.filter((t) => t.mode === 'input');
export const outputsOf = (info: EngineInfo): EngineTensor[] => info.tensors.filter((t) => t.mode === 'output');

export { shapeToString } from '@tritium/core/backend';

/**
 * The optimization profiles an instance group may use: `instance_group[].profile` (strings holding
 * indices), or profile 0 when none is named. Throws Triton's message for an index the engine lacks.
 */
export function profileIndices(config: ModelConfig, numProfiles: number): number[] {
  const out = new Set<number>();
  for (const group of config.instance_group ?? []) {
    for (const p of group.profile ?? []) {
      const index = /^\d+$/.test(p.trim()) ? Number(p) : NaN;
      if (!Number.isInteger(index) || index < 0 || index >= numProfiles) {
        throw new InferError(
          'INTERNAL',
          `unable to autofill for '${config.name}', configuration specified invalid profile ${p} . Number of profiles supported by TensorRT engine: ${numProfiles}`,
        );
      }
      out.add(index);
    }
  }
  if (out.size === 0) out.add(0);
  return [...out].sort((a, b) => a - b);
}

/**
 * The largest batch the engine accepts over `profiles` (tensorrt_backend `GetMaxSupportedBatchSize`:
 * per profile the smallest max dim 0 over the inputs, then the largest over profiles); 0 when some
 * tensor's first dim is not dynamic (the engine cannot batch).
 */
export function engineMaxBatchSize(info: EngineInfo, profiles: readonly number[]): number {
  const data = info.tensors.filter((t) => !t.isShapeTensor);
  if (data.length === 0 || data.some((t) => t.dims.length === 0 || t.dims[0] !== -1)) return 0;
  let best = 0;
  for (const p of profiles) {
    let profileMax = Number.MAX_SAFE_INTEGER;
    for (const t of inputsOf(info)) {
      if (t.isShapeTensor) continue;
      const max = t.profiles[p]?.max[0];
      if (max !== undefined) profileMax = Math.min(profileMax, max);
    }
    if (profileMax !== Number.MAX_SAFE_INTEGER) best = Math.max(best, profileMax);
  }
  return best;
}
