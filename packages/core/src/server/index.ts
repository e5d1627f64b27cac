/**
 * `@tritium/core/server`: what a server around `InferenceServer` needs besides it: the model limits
 * and rate-limit resources its flags set, Triton's server extensions and its log-table layout, the
 * version string of a request path, and the byte-size check a transport makes before core.
 */
export { DEFAULT_MODEL_LIMITS } from './model-limits.ts';
export type { ModelLimits } from './model-limits.ts';
export type { RateLimitResourceFlag } from '../scheduler/rate-limiter.ts';
export { SERVER_EXTENSIONS } from './server-metadata.ts';
export type { ServerExtension } from './server-metadata.ts';
export { formatTable } from './table-printer.ts';
export { parseModelVersion } from './model-version.ts';
export { inputByteSizeMismatch } from './request-validation.ts';
