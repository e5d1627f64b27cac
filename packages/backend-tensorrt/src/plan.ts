/**
 * What an instance's worker needs (plain data, sent as the worker's init): the shim and engine
 * paths, the profile and device, and per config input/output its datatype, config dims, reshape
 * and (inputs) the profile's min/max dims.
 */
import type { DataType } from '@tritium/core';

export interface TensorPlan {
  readonly name: string;
  readonly datatype: DataType;
  /** Config dims, without the batch dim (-1 = any size). */
  readonly dims: readonly number[];
  /** The engine's own shape for this tensor when the config reshapes it (without the batch dim). */
  readonly reshape?: readonly number[];
  /** Inputs: the config lets a request omit it (the engine still needs it bound: refused per request). */
  readonly optional?: boolean;
  /** Inputs: a shape tensor (no batch dim in the request). */
  readonly isShapeTensor?: boolean;
  /** Inputs: the profile's min and max of the full engine shape (batch dim included when batching). */
  readonly min?: readonly number[];
  readonly max?: readonly number[];
}

export interface TrtInstanceInit {
  readonly shimPath: string;
  readonly enginePath: string;
  readonly modelName: string;
  readonly version: number;
  readonly maxBatchSize: number;
  /** Optimization profile of this instance's execution context. */
  readonly profile: number;
  /** CUDA device. */
  readonly device: number;
  readonly inputs: readonly TensorPlan[];
  readonly outputs: readonly TensorPlan[];
}
