import type { ModelConfig } from '@tritium/core';
import type { AutoCompleteConfig } from './auto-complete.ts';
import type { InferenceRequest } from './request.ts';
import type { InferenceResponse } from './response.ts';

/**
 * `initialize(args)`: Triton's keys, every value a string as in the Python backend, plus the parsed
 * config as `modelConfig`.
 */
export interface InitializeArgs {
  /** The model config as Triton's JSON (parse it, or use `modelConfig`). */
  readonly model_config: string;
  /** `CPU`, `GPU` or `MODEL`. */
  readonly model_instance_kind: string;
  /** e.g. `tokenizer_0_1`. */
  readonly model_instance_name: string;
  readonly model_instance_device_id: string;
  /** The model's folder (holds config.pbtxt and the version folders). */
  readonly model_repository: string;
  readonly model_version: string;
  readonly model_name: string;
  /** `model_config`, parsed. */
  readonly modelConfig: ModelConfig;
}

/**
 * What `execute` may return. Default models: one response per request (in order), or ONE response
 * for the whole call whose outputs' first dimension is the batch total (split by rows). Decoupled
 * models: nothing (`undefined`); responses go through each request's response sender.
 */
export type ExecuteReturn = readonly InferenceResponse[] | InferenceResponse | null | undefined | void;

/** The instance side of a `TritonPythonModel` class. Every hook may be async. */
export interface TritonModel {
  initialize?(args: InitializeArgs): unknown;
  execute(requests: InferenceRequest[]): ExecuteReturn | Promise<ExecuteReturn>;
  finalize?(): unknown;
  /**
   * Whether this instance can serve now (Triton python_backend #430): asked every
   * `tritium.ready_poll_ms` (5 s), answered within `tritium.ready_timeout_ms` (1 s). Anything but
   * `true` (a false, a throw, no answer in time) makes the instance not ready: batches go to the
   * model's ready instances, and while none is, the model is not ready (`/v2/models/m/ready`,
   * gRPC ModelReady, the server's `/v2/health/ready`) and its requests fail UNAVAILABLE saying why.
   */
  isReady?(): boolean | Promise<boolean>;
}

/** The class a `model.ts` exports, as `export default class TritonPythonModel` or `export class TritonPythonModel`. */
export interface TritonModelClass {
  new (): TritonModel;
  /** Triton's `auto_complete_config`: fill what config.pbtxt left out; return the config. */
  autoCompleteConfig?(config: AutoCompleteConfig): AutoCompleteConfig | Promise<AutoCompleteConfig>;
}
