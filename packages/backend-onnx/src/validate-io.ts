/**
 * Load-time check of the config against the model signature, as Triton's onnxruntime backend does
 * when it creates an instance (`ValidateInputs` / `ValidateOutputs` + backend_common's
 * `CompareDimsSupported`), with Triton's messages.
 */
import { InferError, type ModelConfig } from '@tritium/core';
import { compareDimsSupported, sequenceTensors } from '@tritium/core/backend';
import { configToWireDataType, wireToConfigDataType } from '@tritium/core/tensor';
import { onnxToConfigType, onnxTypeName } from './onnx-types.ts';
import { shapeToString, type IoInfo, type ModelIo } from './model-io.ts';

function checkType(kind: 'input' | 'output' | 'batch input', model: string, name: string, configType: string, info: IoInfo): void {
  if (configToWireDataType(configType) === undefined) {
    throw new InferError('INTERNAL', `unsupported datatype ${configType} for ${kind} '${name}' for model '${model}'`);
  }
  const modelType = onnxToConfigType(info.onnxType);
  if (modelType !== configType) {
    const wire = configToWireDataType(modelType) ?? 'INVALID';
    throw new InferError('INVALID_ARG', `unexpected datatype ${wire} for ${kind} '${name}', model '${model}', expects ${configType}`);
  }
}

function sortedNames(infos: readonly IoInfo[]): string {
  // Triton lists the allowed names from a std::set: sorted.
  return infos
    .map((i) => i.name)
    .sort()
    .join(', ');
}

/** Throws Triton's INVALID_ARG when the config's inputs/outputs contradict the model. */
export function validateModelIo(config: ModelConfig, io: ModelIo): void {
  const model = config.name;
  const maxBatchSize = config.max_batch_size ?? 0;
  const configInputs = config.input ?? [];
  const batchInputs = config.batch_input ?? [];
  // Triton counts batch inputs among the inputs the model must provide, and a sequence model's
  // control and state inputs.
  const sequence = sequenceTensors(config);
  const expected = configInputs.length + batchInputs.length + sequence.inputs.length;
  if (io.inputs.length !== expected) {
    throw new InferError('INVALID_ARG', `unable to load model '${model}', configuration expects ${expected} inputs, model provides ${io.inputs.length}`);
  }
  const inputs = new Map([...io.inputs, ...io.overridableInitializers].map((i) => [i.name, i]));
  for (const control of sequence.inputs) {
    if (control.kind !== 'control') continue;
    const info = inputs.get(control.name);
    if (!info) throw new InferError('INTERNAL', `configuration specified sequence control '${control.name}', but model does not provide that input`);
    const debatched = maxBatchSize > 0 ? info.dims.slice(1) : info.dims;
    if (debatched.length !== 1 || debatched[0] !== 1) {
      throw new InferError('INVALID_ARG', `unable to load model '${model}', sequence control '${control.name}' in model has dims ${shapeToString(debatched)} but dims [1] is expected`);
    }
    const configType = wireToConfigDataType(control.datatype);
    if (onnxToConfigType(info.onnxType) !== configType) {
      throw new InferError(
        'INVALID_ARG',
        `unable to load model '${model}', sequence control '${control.name}', the model expects data-type ${onnxTypeName(info.onnxType)} but the model configuration specifies data-type ${configType}`,
      );
    }
  }
  for (const input of configInputs) {
    const info = inputs.get(input.name);
    if (!info) {
      throw new InferError('INVALID_ARG', `unexpected inference input '${input.name}', allowed inputs are: ${sortedNames(io.inputs)}`);
    }
    checkType('input', model, input.name, input.data_type, info);
    const dims = input.reshape ? input.reshape.shape : input.dims;
    if (input.allow_ragged_batch) {
      if (info.dims.length !== 1 || info.dims[0] !== -1) {
        throw new InferError(
          'INVALID_ARG',
          `unable to load model '${model}', configuration expects model provides input with shape [-1]  for ragged input '${input.name}', model provides ${shapeToString(info.dims)}`,
        );
      }
    } else {
      compareDimsSupported(model, input.name, info.dims, dims, maxBatchSize, false);
    }
  }
  for (const batchInput of batchInputs) {
    for (const target of batchInput.target_name) {
      const info = inputs.get(target);
      if (!info) {
        throw new InferError('INVALID_ARG', `unexpected inference batch input '${target}', allowed inputs are: ${sortedNames(io.inputs)}`);
      }
      checkType('batch input', model, target, batchInput.data_type, info);
    }
  }
  const outputs = new Map(io.outputs.map((o) => [o.name, o]));
  const batchOutputs = new Set((config.batch_output ?? []).flatMap((b) => b.target_name));
  for (const output of config.output ?? []) {
    const info = outputs.get(output.name);
    if (!info) {
      throw new InferError('INVALID_ARG', `unexpected inference output '${output.name}', allowed outputs are: ${sortedNames(io.outputs)}`);
    }
    checkType('output', model, output.name, output.data_type, info);
    if (!batchOutputs.has(output.name)) {
      compareDimsSupported(model, output.name, info.dims, output.reshape ? output.reshape.shape : output.dims, maxBatchSize, true);
    }
  }
}
