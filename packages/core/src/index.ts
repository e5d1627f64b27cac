/**
 * @tritium/core — the engine of Tritium: tensors, the config.pbtxt language, the model repository,
 * schedulers, the worker host and InferenceServer. No DI, no transports, no ONNX.
 */
export { InferError, ERROR_CODES } from './errors.ts';
export type { ErrorCode, WireError } from './errors.ts';
export * from './tensor/data-type.ts';
export * from './tensor/tensor.ts';
export type * from './types.ts';
export type * from './config/model-config.ts';
export { toNumber } from './config/model-config.ts';
export { BACKEND_API_VERSION } from './backend/spi.ts';
export type * from './backend/spi.ts';
export type { Logger } from './logger.ts';
export { silentLogger } from './logger.ts';
export type { Scheduler, Clock } from './scheduler/scheduler.ts';
export { systemClock } from './scheduler/scheduler.ts';
export type * from './server/server-api.ts';
export type { StatsRecorder, FailureReason } from './scheduler/stats-recorder.ts';
export { nullStatsRecorder } from './scheduler/stats-recorder.ts';
