/**
 * Types that tie the author API to one model's config: `tritium types` writes a `Spec` for the
 * model (its inputs and outputs: names, datatypes, dims, the shape the model sees) into
 * `model-types.d.ts`, and `InferenceRequest<Spec>` / `ModelTensorConstructor<Spec>` then check
 * input and output names, array types and shape ranks at compile time. All type-only: nothing
 * here exists at run time.
 */
import type { DataType, DataTypeMap } from '@tritium/core';
import type { Tensor } from './tensor.ts';

/** One input or output as the config declares it. */
export interface TensorSpec {
  readonly datatype: DataType;
  /** `dims` of the config (`-1` is variable). */
  readonly dims: readonly number[];
  /** The shape the model sees: `[batch, ...dims]` when the model batches (`reshape` applied), else dims. */
  readonly shape: readonly number[];
  /** `optional: true` in the config: a request may leave it out. */
  readonly optional: boolean;
}

/** A model's inputs and outputs (the default: any names, any types). */
export interface ModelSpec {
  readonly name: string;
  /** `max_batch_size`; 0: no batch dimension. */
  readonly maxBatchSize: number;
  readonly inputs: { readonly [name: string]: TensorSpec };
  readonly outputs: { readonly [name: string]: TensorSpec };
}

/** The typed array a tensor's `.data` is for each datatype (FP16/BF16 as raw bits, BYTES as wire bytes). */
export type DataArray<D extends DataType> = DataTypeMap[D];

/**
 * What an output of each datatype is built from: its typed array (core's generated DataTypeMap;
 * FP16/BF16 as raw bits), and for BOOL also booleans, for BYTES strings or byte strings, one per
 * element.
 */
export type OutputDataMap = Omit<DataTypeMap, 'BOOL' | 'BYTES'> & {
  readonly BOOL: Uint8Array | readonly boolean[];
  readonly BYTES: readonly (string | Uint8Array)[];
};

export type OutputData<D extends DataType> = OutputDataMap[D];

/** Names of a spec's inputs / outputs. */
export type InputName<S extends ModelSpec> = keyof S['inputs'] & string;
export type OutputName<S extends ModelSpec> = keyof S['outputs'] & string;

/** What `request.input(name)` gives: the tensor, or undefined for an optional input left out. */
export type InputTensor<T extends TensorSpec> = T['optional'] extends false ? Tensor<T['datatype']> : Tensor<T['datatype']> | undefined;

/**
 * The `Tensor` constructor of one model's outputs (what `model-types.d.ts` exports as `Tensor`):
 * only declared output names, each with the array type of its datatype and a shape of its rank.
 */
export interface ModelTensorConstructor<S extends ModelSpec> {
  // The constraint is spelt out (not OutputName<S>) so a compiler error lists the names.
  new <N extends keyof S['outputs'] & string>(name: N, data: OutputData<S['outputs'][N]['datatype']>, shape: S['outputs'][N]['shape']): Tensor<S['outputs'][N]['datatype']>;
  readonly prototype: Tensor;
}
