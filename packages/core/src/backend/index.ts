/**
 * `@tritium/core/backend`: the backend SPI (spi.ts: Backend → BackendModel → ModelInstance) and the
 * helpers backends share: batching a batch's inputs and splitting outputs by rows, grouped execution,
 * the config's tensor plan, request validation, shape checks, sequence control tensors.
 */
export { BACKEND_API_VERSION } from './spi.ts';
export type * from './spi.ts';
export { instanceFailure, isInstanceFailure } from './instance-failure.ts';
export { rowsOf, concatInputs, splitOutputs } from '../tensor/batch.ts';
export type { SplitOptions } from '../tensor/batch.ts';
export { executeInGroups, answersOfRun, outputsToFetch } from './grouped-execute.ts';
export type { GroupedExecuteOptions, RunMember, RunTimings } from './grouped-execute.ts';
export { executeDecoupledToEnd } from './decoupled-to-end.ts';
export { configTensorPlan } from './config-tensor-plan.ts';
export { instanceWorkerOptions } from './instance-worker.ts';
export type { InstanceWorkerOptions } from './instance-worker.ts';
export type { ConfigTensorPlan } from './config-tensor-plan.ts';
export { validateRequest, requestTag, requestSpecOf } from '../server/request-validation.ts';
export type { RequestSpec, RequestInputSpec, PlannedInput } from '../server/request-validation.ts';
export { compareDimsSupported, shapeToString } from './compare-dims.ts';
export { sequenceTensors } from '../scheduler/sequence/controls.ts';
export type { ControlFlags, SequenceTensorSpec } from '../scheduler/sequence/controls.ts';
