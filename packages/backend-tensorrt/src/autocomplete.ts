/**
 * Triton's TensorRT auto-complete (tensorrt_backend `ModelState::AutoCompleteConfigHelper`), for
 * TensorRT 10 engines (explicit batch): infer whether the config's own dims hint at batching, take
 * the engine's max batch from its optimization profiles (dynamic first dim), fill or check
 * max_batch_size, add `dynamic_batching {}` when max_batch_size > 1 and no scheduler is set, and
 * fill missing inputs/outputs and missing data types/dims of listed ones.
 */
import { InferError, type Logger, type ModelConfig, type ModelInput, type ModelOutput } from '@tritium/core';
import { emptyDynamicBatching } from '@tritium/core/config';
import type { EngineInfo, EngineTensor } from './binding.ts';
import { engineMaxBatchSize, inputsOf, outputsOf, profileIndices } from './engine-io.ts';
import { trtToConfigType } from './trt-types.ts';

function sortedNames(tensors: readonly EngineTensor[]): string {
  return tensors
    .map((t) => t.name)
    .sort()
    .join(', ');
}

/** Whether the config's listed dims hint at batching (tensorrt_backend `ExtractBatchHintFromIOConfig`). */
function configBatchHint(config: ModelConfig, info: EngineInfo): { hint: boolean; withShape: number } {
  let hint = false;
  let withShape = 0;
  const lists: [readonly (ModelInput | ModelOutput)[], EngineTensor[], 'input' | 'output'][] = [
    [config.input ?? [], inputsOf(info), 'input'],
    [config.output ?? [], outputsOf(info), 'output'],
  ];
  for (const [ios, tensors, kind] of lists) {
    for (const io of ios) {
      if ('allow_ragged_batch' in io && io.allow_ragged_batch) {
        // A tensor allowing ragged batches is a hint for batching.
        hint = true;
        continue;
      }
      const tensor = tensors.find((t) => t.name === io.name);
      if (!tensor) {
        throw new InferError('INVALID_ARG', `unexpected inference ${kind} '${io.name}', allowed ${kind}s are: ${sortedNames(tensors)}`);
      }
      const dims = io.reshape ? io.reshape.shape : (io.dims ?? []);
      if (dims.length === 0) continue;
      withShape++;
      const shouldBatch = tensor.isShapeTensor ? tensor.dims[0] === dims[0]! + 1 : tensor.dims.length === dims.length + 1;
      if (shouldBatch) hint = true;
      if (hint && !shouldBatch) {
        throw new InferError(
          'INTERNAL',
          `unable to autofill for '${config.name}', model tensor configurations are contradicting each other in terms of whether batching is supported`,
        );
      }
    }
  }
  return { hint, withShape };
}

function refDims(tensor: EngineTensor, maxBatchSize: number): { dims: number[]; reshape?: { shape: number[] } } {
  if (tensor.isShapeTensor) {
    if (tensor.dims.length === 0) return { dims: [] };
    return { dims: [maxBatchSize !== 0 ? tensor.dims[0]! - 1 : tensor.dims[0]!] };
  }
  const dims = tensor.dims.slice(maxBatchSize !== 0 ? 1 : 0);
  // 'dims' may not be empty: a scalar is dims [1] reshaped to [].
  return dims.length === 0 ? { dims: [1], reshape: { shape: [] } } : { dims };
}

function refInput(t: EngineTensor, maxBatchSize: number): ModelInput {
  return {
    name: t.name,
    data_type: trtToConfigType(t.trtType),
    format: 'FORMAT_NONE',
    ...refDims(t, maxBatchSize),
    is_shape_tensor: t.isShapeTensor,
    allow_ragged_batch: false,
    optional: false,
    is_non_linear_format_io: false,
  };
}

function refOutput(t: EngineTensor, maxBatchSize: number): ModelOutput {
  return {
    name: t.name,
    data_type: trtToConfigType(t.trtType),
    ...refDims(t, maxBatchSize),
    label_filename: '',
    is_shape_tensor: t.isShapeTensor,
    is_non_linear_format_io: false,
  };
}

/** tensorrt_backend `FixIO`: fills a listed tensor's missing data_type and dims from the engine. */
function fixIo<T extends ModelInput | ModelOutput>(listed: T[], refs: T[]): T[] {
  if (listed.length === 0) return refs;
  return listed.map((io) => {
    const ref = refs.find((r) => r.name === io.name);
    if (!ref) return io;
    const out = { ...io };
    if (!out.data_type || out.data_type === 'TYPE_INVALID') out.data_type = ref.data_type;
    if (!out.dims || out.dims.length === 0) {
      out.dims = ref.dims;
      if (ref.reshape) out.reshape = ref.reshape;
    }
    return out;
  });
}

/** Completes `config` from the engine signature; returns a new config (the argument is not modified). */
export function autoCompleteConfig(config: ModelConfig, info: EngineInfo, log: Logger): ModelConfig {
  const out: ModelConfig = structuredClone(config);
  const profiles = profileIndices(out, info.numProfiles);
  const { hint, withShape } = configBatchHint(out, info);
  let engineMax = engineMaxBatchSize(info, profiles);
  if (hint && engineMax === 0) {
    throw new InferError(
      'INTERNAL',
      `autofill failed for model '${out.name}': model tensor shape configuration hints for dynamic batching but the underlying engine doesn't support batching.`,
    );
  } else if (withShape !== 0 && !hint) {
    log.warn(`The specified dimensions in model config for ${out.name} hints that batching is unavailable`);
    engineMax = 0;
  }
  const configured = out.max_batch_size ?? 0;
  if (configured === 0) {
    out.max_batch_size = engineMax;
  } else if (configured > engineMax) {
    throw new InferError(
      'INTERNAL',
      `autofill failed for model '${out.name}': configuration specified max-batch ${configured} but TensorRT engine only supports max-batch ${engineMax}`,
    );
  }
  if (out.max_batch_size > 1 && !out.sequence_batching && !out.dynamic_batching) {
    out.dynamic_batching = emptyDynamicBatching();
  }
  out.input = fixIo(out.input ?? [], inputsOf(info).map((t) => refInput(t, out.max_batch_size)));
  out.output = fixIo(out.output ?? [], outputsOf(info).map((t) => refOutput(t, out.max_batch_size)));
  return out;
}
