/**
 * The backends of optional packages, as Backend entries that load their package on first use: the
 * name and platforms a model is matched by are known without the package, so a server whose models
 * never ask for ONNX or TensorRT never loads them, and one that does without the package installed
 * fails only those models' loads, naming the package (optional-package.ts).
 */
import type { ModelConfig } from '@tritium/core';
import { BACKEND_API_VERSION, type AutoCompleteSpec, type Backend, type BackendModel, type LoadSpec } from '@tritium/core/backend';
import { lazyImport, OPTIONAL_PACKAGES } from './optional-package.ts';

/** What core matches a model by, known before the package loads; `load` builds the real backend. */
export interface OptionalBackendSpec {
  readonly name: string;
  readonly platforms: readonly string[];
  readonly defaultModelFilename: string;
  readonly parallelInstanceLoading: boolean;
  readonly packageName: string;
  readonly load: () => Promise<Backend>;
}

/** A Backend that imports `spec.packageName` the first time a model needs it. */
export function optionalBackend(spec: OptionalBackendSpec): Backend {
  const backend = lazyImport(spec.packageName, `backend '${spec.name}' (platform ${spec.platforms.join(', ')})`, spec.load);
  let loaded: Backend | undefined;
  const real = async (): Promise<Backend> => (loaded ??= await backend());
  return {
    name: spec.name,
    apiVersion: BACKEND_API_VERSION,
    platforms: spec.platforms,
    defaultModelFilename: spec.defaultModelFilename,
    parallelInstanceLoading: spec.parallelInstanceLoading,
    async autoComplete(autoSpec: AutoCompleteSpec): Promise<ModelConfig> {
      const b = await real();
      return b.autoComplete ? b.autoComplete(autoSpec) : autoSpec.config;
    },
    async loadModel(loadSpec: LoadSpec): Promise<BackendModel> {
      return (await real()).loadModel(loadSpec);
    },
    async dispose(): Promise<void> {
      await loaded?.dispose?.();
    },
  };
}

/** ONNX Runtime (`@tritium/backend-onnx`), loaded when a model is `onnxruntime_onnx`. */
export function optionalOnnxBackend(): Backend {
  return optionalBackend({
    name: 'onnxruntime',
    platforms: ['onnxruntime_onnx'],
    defaultModelFilename: 'model.onnx',
    parallelInstanceLoading: true,
    packageName: OPTIONAL_PACKAGES.onnx,
    load: async () => (await import('@tritium/backend-onnx')).onnxBackend(),
  });
}

/** TensorRT (`@tritium/backend-tensorrt`), loaded when a model is `tensorrt_plan`. */
export function optionalTensorrtBackend(): Backend {
  return optionalBackend({
    name: 'tensorrt',
    platforms: ['tensorrt_plan'],
    defaultModelFilename: 'model.plan',
    parallelInstanceLoading: false,
    packageName: OPTIONAL_PACKAGES.tensorrt,
    load: async () => (await import('@tritium/backend-tensorrt')).tensorrtBackend(),
  });
}
