/**
 * @file The model-author API of Tritium's python-like backend: what a `model.ts` imports. It mirrors
 * Triton's `triton_python_backend_utils` (pb_utils) so a `model.py` translates line by line.
 *
 * ```ts
 * import { Tensor, InferenceResponse, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';
 *
 * export default class TritonPythonModel {
 *   async execute(requests: InferenceRequest[]): Promise<InferenceResponse[]> {
 *     return requests.map((request) => {
 *       const text = getInputTensorByName(request, 'TEXT')!.strings();
 *       return new InferenceResponse({ outputTensors: [new Tensor('UPPER', text.map((s) => s.toUpperCase()), [text.length, 1])] });
 *     });
 *   }
 * }
 * ```
 */
export { Tensor } from './tensor.ts';
export type { TensorData, TensorElement, NestedArray } from './tensor.ts';
export { TritonError, TritonModelException } from './errors.ts';
export { InferenceResponse, getOutputTensorByName } from './response.ts';
export type { InferenceResponseInit } from './response.ts';
export {
  InferenceRequest,
  getInputTensorByName,
  TRITONSERVER_RESPONSE_COMPLETE_FINAL,
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_START,
  TRITONSERVER_REQUEST_FLAG_SEQUENCE_END,
  TRITONSERVER_REQUEST_RELEASE_ALL,
  TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
} from './request.ts';
export type { InferenceRequestInit, InferenceResponseSender, ExecOptions } from './request.ts';
export { ResponseIterator } from './response-iterator.ts';
export { getInputConfigByName, getOutputConfigByName, usingDecoupledModelTransactionPolicy } from './config-helpers.ts';
export type { ModelConfigLike } from './config-helpers.ts';
export { stackInputs, batchSizes } from './stack.ts';
export { AutoCompleteConfig } from './auto-complete.ts';
export type { AutoCompleteTensor } from './auto-complete.ts';
export { Logger } from './logger.ts';
export { MetricFamily, Metric } from './metrics.ts';
export type { MetricFamilyInit, MetricInit } from './metrics.ts';
export type { MetricKind } from '@tritium/core/metrics';
export type { InitializeArgs, ExecuteReturn, TritonModel, TritonModelClass } from './model.ts';
export type {
  ModelSpec,
  TensorSpec,
  DataArray,
  OutputData,
  OutputDataMap,
  InputName,
  OutputName,
  InputTensor,
  ModelTensorConstructor,
} from './model-spec.ts';
export type { DataType, ModelConfig, ModelInput, ModelOutput, ParameterValue, ErrorCode } from '@tritium/core';
