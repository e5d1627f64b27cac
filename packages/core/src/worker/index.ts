/**
 * `@tritium/core/worker`: the worker host (`spawnWorkerInstance`) for backends whose instances run
 * in a worker thread or a sandboxed child process, what their worker entries implement, the
 * isolation parameters of a model's config, and the process sandbox's guarantees.
 */
export { spawnWorkerInstance } from './worker-host.ts';
export type {
  WorkerInstanceOptions,
  WorkerInstance,
  WorkerPolicy,
  WorkerRestartPolicy,
  ReadinessPolicy,
  WorkerResourceLimits,
  WorkerContext,
  BlsStream,
  WorkerExecuteContext,
  WorkerModelInstance,
  WholeBatchOutput,
  WorkerExecuteOutput,
  CreateWorkerInstance,
} from './types.ts';
export { compiledModule } from './compiled-module.ts';
export {
  ISOLATION_KEYS,
  isolationParameters,
  workerBounds,
  boolParameter,
  durationParameter,
} from './isolation-parameters.ts';
export type { Isolation, IsolationParameters, IsolationDefaults } from './isolation-parameters.ts';
export { restrictToSandbox } from './sandbox-files.ts';
export { probeSandboxHost } from './process-sandbox.ts';
export type { SandboxHost } from './process-sandbox.ts';
export { SEND_CANCELLED_MESSAGE } from './sink-flow.ts';
export { DEFAULT_MODEL_LOG_BYTES_PER_SEC } from './model-output.ts';
export { terminateWorkerThreads } from './live-threads.ts';
export { processAlive } from '../stale-temp.ts';
