/**
 * @file `@tritium/backend-python-like`: Triton's Python backend, for TypeScript. Register the
 * backend; configs with `backend: "python"` then load their version folder's `model.ts`.
 *
 * ```ts
 * import { pythonLikeBackend } from '@tritium/backend-python-like';
 * const backends = [pythonLikeBackend()];
 * ```
 *
 * Model authors import `@tritium/backend-python-like/model` (see the README).
 */
export { pythonLikeBackend } from './backend.ts';
export type { PythonLikeBackendOptions } from './backend.ts';
export { PARAMETER_KEYS } from './parameters.ts';
export type { SandboxParameters } from './parameters.ts';
export { MODEL_FILENAMES } from './locate-model.ts';
export { runModelOnce, tensorToJson } from './run-once.ts';
export type { RunOnceOptions, RunOnceResult, JsonOutput } from './run-once.ts';
export { tensorFromJson } from './json-input.ts';
export { generateModelTypes, isGenerated, MODEL_TYPES_BASENAME } from './types/model-types.ts';
export type { ModelTypesFiles } from './types/model-types.ts';
export { writeModelTypes, writeTsconfig } from './types/write-types.ts';
export type { WrittenFile } from './types/write-types.ts';
export { modelCompilerOptions } from './types/compiler-options.ts';
export { TYPE_CHECK_MODES } from './type-check/model-check.ts';
export type { TypeCheckMode } from './type-check/model-check.ts';
