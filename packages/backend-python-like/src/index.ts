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
