/**
 * What a backend that batches inside one instance (ONNX Runtime, TensorRT) sends its worker about
 * each config input and output: written once here, as the backend conformance suite runs both
 * backends through the same contract.
 */
import { InferError } from '../errors.ts';
import type { ModelInput, ModelOutput } from '../config/model-config.ts';
import { configToWireDataType, type DataType } from '../tensor/data-type.ts';

/** A config input's or output's wire datatype, dims and reshape (plain data, for a worker's init). */
export interface ConfigTensorPlan {
  readonly name: string;
  readonly datatype: DataType;
  /** Config dims, without the batch dim (-1 = any size). */
  readonly dims: readonly number[];
  /** The model's own shape when the config reshapes the tensor (without the batch dim). */
  readonly reshape?: readonly number[];
  /** Inputs only: may be absent from a request. */
  readonly optional?: boolean;
}

/**
 * The plan of one config tensor; INVALID_ARG `model 'm': tensor 't' has unsupported data type X`
 * for TYPE_INVALID and for any datatype in `unsupported` (the backend cannot hold it).
 */
export function configTensorPlan(io: ModelInput | ModelOutput, model: string, unsupported: readonly DataType[] = []): ConfigTensorPlan {
  const datatype = configToWireDataType(io.data_type);
  if (!datatype || unsupported.includes(datatype)) {
    throw new InferError('INVALID_ARG', `model '${model}': tensor '${io.name}' has unsupported data type ${io.data_type}`);
  }
  return {
    name: io.name,
    datatype,
    dims: [...io.dims],
    ...(io.reshape ? { reshape: [...io.reshape.shape] } : {}),
    ...('optional' in io && io.optional ? { optional: true } : {}),
  };
}
