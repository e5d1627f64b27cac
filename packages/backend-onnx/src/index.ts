/**
 * @tritium/backend-onnx — ONNX Runtime (onnxruntime-node) as a Tritium backend: one session per
 * instance inside its own worker, Triton's auto-complete and config checks, Triton's ORT knobs.
 */
export { onnxBackend } from './backend.ts';
export type { OnnxBackendOptions } from './backend.ts';
export { autoCompleteConfig, DEFAULT_MAX_BATCH_SIZE } from './autocomplete.ts';
export { parseModelIo, readModelIo, resolveModelPath, DEFAULT_MODEL_FILENAME } from './model-io.ts';
export type { IoInfo, ModelIo } from './model-io.ts';
export { validateModelIo } from './validate-io.ts';
export { modelSessionOptions, instanceProviders, instanceCount } from './session-options.ts';
export type { OrtSessionOptions, OrtRunOptions, ProviderChoice } from './session-options.ts';
export { gpuSupport } from './gpu.ts';
export type { GpuSupport } from './gpu.ts';
