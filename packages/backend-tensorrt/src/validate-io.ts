/**
 * Load-time check of the (completed, normalized) config against the engine, with Triton's
 * messages where Triton has one: tensor names, data types, dims (backend_common
 * `CompareDimsSupported`), the configured dims inside the instance's optimization profile
 * (tensorrt_backend `ValidateDimension`), max_batch_size against the profiles. Shape tensors are
 * not supported by this backend and are refused here (data-dependent output shapes fail at run
 * time, in the shim).
 */
import { InferError, type ModelConfig } from '@tritium/core';
import { compareDimsSupported } from '@tritium/core/backend';
import { configToWireDataType } from '@tritium/core/tensor';
import type { EngineInfo, EngineTensor } from './binding.ts';
import { engineMaxBatchSize, inputsOf, outputsOf } from './engine-io.ts';
import { trtToConfigType, trtTypeName } from './trt-types.ts';

function sortedNames(tensors: readonly EngineTensor[]): string {
  return tensors
    .map((t) => t.name)
    .sort()
    .join(', ');
}

function checkType(kind: 'input' | 'output', model: string, name: string, configType: string, tensor: EngineTensor): void {
  const modelType = trtToConfigType(tensor.trtType);
  if (modelType === 'TYPE_INVALID' || configToWireDataType(modelType) === undefined) {
    throw new InferError('INTERNAL', `unsupported datatype ${trtTypeName(tensor.trtType)} for ${kind} '${name}' for model '${model}'`);
  }
  if (modelType !== configType) {
    throw new InferError(
      'INVALID_ARG',
      `unable to load model '${model}', configuration expects datatype ${configType} for ${kind} '${name}', model provides ${modelType}`,
    );
  }
}

/** Config dims within the profile's [min, max] (a -1 in the config is not checked). */
function checkProfile(model: string, name: string, tensor: EngineTensor, dims: readonly number[], maxBatchSize: number, profile: number): void {
  const shape = tensor.profiles[profile];
  if (!shape) return;
  const offset = maxBatchSize > 0 ? 1 : 0;
  dims.forEach((d, i) => {
    const lo = shape.min[i + offset]!;
    const hi = shape.max[i + offset]!;
    if (d !== -1 && (d < lo || d > hi)) {
      throw new InferError(
        'INVALID_ARG',
        `unable to load model '${model}', input '${name}': model expected the shape of dimension ${i} to be between ${lo} and ${hi} but received ${d}`,
      );
    }
  });
}

/** Throws when the config's inputs/outputs or max_batch_size contradict the engine (profile: the instances' profile). */
export function validateEngineIo(config: ModelConfig, info: EngineInfo, profile: number): void {
  const model = config.name;
  const maxBatchSize = config.max_batch_size ?? 0;
  const inputs = inputsOf(info);
  const outputs = outputsOf(info);
  for (const t of info.tensors) {
    if (t.isShapeTensor) throw new InferError('UNSUPPORTED', `unable to load model '${model}': shape tensor '${t.name}' is not supported by Tritium's TensorRT backend`);
  }
  const configInputs = config.input ?? [];
  if (inputs.length !== configInputs.length) {
    throw new InferError('INVALID_ARG', `unable to load model '${model}', configuration expects ${configInputs.length} inputs, model provides ${inputs.length}`);
  }
  for (const input of configInputs) {
    const tensor = inputs.find((t) => t.name === input.name);
    if (!tensor) throw new InferError('INVALID_ARG', `unexpected inference input '${input.name}', allowed inputs are: ${sortedNames(inputs)}`);
    checkType('input', model, input.name, input.data_type, tensor);
    const dims = input.reshape ? input.reshape.shape : input.dims;
    compareDimsSupported(model, input.name, tensor.dims, dims, maxBatchSize, false);
    checkProfile(model, input.name, tensor, dims, maxBatchSize, profile);
  }
  for (const output of config.output ?? []) {
    const tensor = outputs.find((t) => t.name === output.name);
    if (!tensor) throw new InferError('INVALID_ARG', `unexpected inference output '${output.name}', allowed outputs are: ${sortedNames(outputs)}`);
    checkType('output', model, output.name, output.data_type, tensor);
    compareDimsSupported(model, output.name, tensor.dims, output.reshape ? output.reshape.shape : output.dims, maxBatchSize, false);
  }
  if (maxBatchSize > 0) {
    const engineMax = engineMaxBatchSize(info, [profile]);
    if (maxBatchSize > engineMax) {
      throw new InferError(
        'INVALID_ARG',
        `unable to load model '${model}': configuration specified max-batch ${maxBatchSize} but TensorRT engine only supports max-batch ${engineMax} (optimization profile ${profile})`,
      );
    }
  }
}
