/**
 * What the instance runtime needs from the author API, bundled together with each model so the
 * runtime and the model's code share ONE copy of these classes (`instanceof` holds) in thread and
 * process isolation alike. Not part of the author API.
 */
export { Tensor } from './tensor.ts';
export { InferenceResponse } from './response.ts';
export { incomingRequest, TRITONSERVER_RESPONSE_COMPLETE_FINAL } from './request.ts';
export type { InferenceRequest, InferenceResponseSender } from './request.ts';
export { setRuntimeLink } from './runtime-link.ts';
export { TritonError, toTritonError } from './errors.ts';
export { AutoCompleteConfig } from './auto-complete.ts';
