import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { Backend } from '../backend/spi.ts';

/** Triton platform names and the backend that serves each (docs/triton-compatibility.md §6). */
const PLATFORM_BACKEND: Readonly<Record<string, string>> = {
  onnxruntime_onnx: 'onnxruntime',
  tensorrt_plan: 'tensorrt',
  pytorch_libtorch: 'pytorch',
  tensorflow_graphdef: 'tensorflow',
  tensorflow_savedmodel: 'tensorflow',
};

/** Backend names users write that we serve under another name (`backend: "tensorrt_plan"`). */
const BACKEND_ALIASES: Readonly<Record<string, string>> = {
  onnxruntime_onnx: 'onnxruntime',
  tensorrt_plan: 'tensorrt',
};

export const ENSEMBLE_PLATFORM = 'ensemble';

export function isEnsembleConfig(config: Pick<ModelConfig, 'platform'>): boolean {
  return config.platform === ENSEMBLE_PLATFORM;
}

/** Our backend name for a config: `backend`, its alias, or the backend of its `platform`. */
export function backendNameOf(config: Pick<ModelConfig, 'backend' | 'platform'>): string {
  if (config.backend) return BACKEND_ALIASES[config.backend] ?? config.backend;
  return PLATFORM_BACKEND[config.platform] ?? config.platform;
}

/**
 * The registered backend serving this config (python → the python-like backend registered as
 * `python`; onnxruntime_onnx/onnxruntime → `onnxruntime`; tensorrt_plan/tensorrt → `tensorrt`),
 * or Triton's "unable to find backend library" error.
 */
export function findBackend(config: ModelConfig, backends: readonly Backend[]): Backend {
  const name = backendNameOf(config);
  const found =
    backends.find((b) => b.name === name) ??
    (config.platform ? backends.find((b) => b.platforms?.includes(config.platform)) : undefined);
  if (found) return found;
  // Triton's message when no library or python-based runtime is found for the backend
  // (TritonModel::GetBackendRuntimeLibraryName; qa/L0_model_config's unknown_backend case expects it).
  throw new InferError(
    'INVALID_ARG',
    `unable to find backend library for backend '${name}', try specifying runtime on the model configuration.`,
  );
}
