/**
 * @tritium/backend-tensorrt — TensorRT `.plan` engines as a Tritium backend, through koffi to a
 * small C shim over TensorRT 10 (`native/`). One engine + execution context + CUDA stream per
 * instance, each in its own worker (a child process by default); Triton's auto-complete and checks.
 */
export { tensorrtBackend } from './backend.ts';
export type { TensorrtBackendOptions } from './backend.ts';
export { autoCompleteConfig } from './autocomplete.ts';
export { validateEngineIo } from './validate-io.ts';
export { DEFAULT_MODEL_FILENAME, readEngineInfo, resolveEnginePath, engineMaxBatchSize, profileIndices } from './engine-io.ts';
export { trtToConfigType } from './trt-types.ts';
export {
  TrtShim,
  TrtEngine,
  TrtContext,
  TrtCallError,
  TrtStatus,
  SHIM_ENV,
  TRT_SHIM_ABI_VERSION,
  defaultShimPath,
  resolveShimPath,
  shimUnavailableError,
} from './binding.ts';
export type { EngineInfo, EngineTensor, ProfileShape } from './binding.ts';
