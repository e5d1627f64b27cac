/**
 * `@tritium/core/scheduler`: the scheduler contract and core's schedulers, to drive one without a
 * server (benchmarks, embedders): `createScheduler` picks the one a model's config asks for.
 */
export type { Scheduler, Clock } from './scheduler.ts';
export type { StatsRecorder, FailureReason, ResponseOutcome } from './stats-recorder.ts';
export { nullStatsRecorder } from './stats-recorder.ts';
export { createScheduler } from './create-scheduler.ts';
export type { SchedulerDeps } from './create-scheduler.ts';
export { DynamicBatcher } from './dynamic-batcher.ts';
export { batcherOptionsFromConfig } from './batcher-options.ts';
export type { BatcherDeps, BatcherOptions, QueuePolicy } from './batcher-options.ts';
