/**
 * What an instance's worker needs to know about the model's tensors (plain data, sent as the
 * worker's init): for each config input/output its datatype, config dims and reshape.
 */
import type { DataType } from '@tritium/core';
import type { OrtRunOptions, OrtSessionOptions } from './session-options.ts';

export interface TensorPlan {
  readonly name: string;
  readonly datatype: DataType;
  /** Config dims, without the batch dim (-1 = any size). */
  readonly dims: readonly number[];
  /** The model's own shape for this tensor when the config reshapes it (without the batch dim). */
  readonly reshape?: readonly number[];
  /** Inputs only: may be absent from a request. */
  readonly optional?: boolean;
  /** Inputs only: `allow_ragged_batch` — requests' elements are concatenated into one 1-D tensor. */
  readonly ragged?: boolean;
}

/** A `batch_input`: a tensor the backend computes from the formed batch (ragged batching). */
export interface BatchInputPlan {
  readonly kind: string;
  /** Model input it feeds. */
  readonly target: string;
  readonly datatype: 'INT32' | 'FP32';
  /** The request input it describes. */
  readonly source: string;
}

export interface OnnxInstanceInit {
  readonly modelPath: string;
  readonly modelName: string;
  readonly version: number;
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorPlan[];
  readonly outputs: readonly TensorPlan[];
  readonly batchInputs: readonly BatchInputPlan[];
  readonly session: OrtSessionOptions;
  readonly run: OrtRunOptions;
}
