/**
 * Triton's ONNX Runtime auto-complete (onnxruntime_backend `ModelState::AutoCompleteConfig`):
 * skipped when the config lists both inputs and outputs; otherwise reads the model's signature,
 * infers batching (every input and output has first dim -1), fills max_batch_size (0 → the
 * backend's default-max-batch-size, 4, with Triton's warning), adds `dynamic_batching {}` when
 * max_batch_size > 1 and no scheduler is set, and fills missing inputs/outputs (batch dim dropped;
 * scalars as dims [1] + reshape { shape: [] }).
 */
import { InferError, type Logger, type ModelConfig, type ModelInput, type ModelOutput } from '@tritium/core';
import { emptyDynamicBatching } from '@tritium/core/config';
import { onnxToConfigType } from './onnx-types.ts';
import type { IoInfo, ModelIo } from './model-io.ts';

/** Triton's onnxruntime backend default for `--backend-config=onnxruntime,default-max-batch-size=N`. */
export const DEFAULT_MAX_BATCH_SIZE = 4;

function supportsBatching(io: ModelIo): boolean {
  return [...io.inputs, ...io.outputs].every((t) => t.dims.length > 0 && t.dims[0] === -1);
}

function ioDims(info: IoInfo, maxBatchSize: number): { dims: number[]; reshape?: { shape: number[] } } {
  const dims = info.dims.slice(maxBatchSize > 0 ? 1 : 0);
  return dims.length === 0 ? { dims: [1], reshape: { shape: [] } } : { dims };
}

function toInput(info: IoInfo, maxBatchSize: number): ModelInput {
  return {
    name: info.name,
    data_type: onnxToConfigType(info.onnxType),
    format: 'FORMAT_NONE',
    ...ioDims(info, maxBatchSize),
    is_shape_tensor: false,
    allow_ragged_batch: false,
    optional: false,
    is_non_linear_format_io: false,
  };
}

function toOutput(info: IoInfo, maxBatchSize: number): ModelOutput {
  return {
    name: info.name,
    data_type: onnxToConfigType(info.onnxType),
    ...ioDims(info, maxBatchSize),
    label_filename: '',
    is_shape_tensor: false,
    is_non_linear_format_io: false,
  };
}

/** Triton's info line when the config already lists inputs and outputs. */
export function skippedMessage(model: string): string {
  return `skipping model configuration auto-complete for '${model}': inputs and outputs already specified`;
}

/** True when Triton would skip auto-complete (the config already lists inputs and outputs). */
export function autoCompleteSkipped(config: ModelConfig): boolean {
  const inputs = (config.input?.length ?? 0) + (config.batch_input?.length ?? 0);
  return inputs > 0 && (config.output?.length ?? 0) > 0;
}

/**
 * Completes `config` from the model signature `io`; returns a new config (the argument is not
 * modified). Throws INVALID_ARG with Triton's message when the model cannot batch but the config
 * sets a non-zero max_batch_size.
 */
export function autoCompleteConfig(config: ModelConfig, io: ModelIo, log: Logger, defaultMaxBatchSize = DEFAULT_MAX_BATCH_SIZE): ModelConfig {
  const out: ModelConfig = structuredClone(config);
  if (autoCompleteSkipped(out)) {
    log.info(skippedMessage(out.name));
    return out;
  }
  const inputCount = (out.input?.length ?? 0) + (out.batch_input?.length ?? 0);
  const outputCount = out.output?.length ?? 0;
  let maxBatchSize = out.max_batch_size ?? 0;
  if (supportsBatching(io)) {
    if (maxBatchSize === 0) {
      maxBatchSize = Math.max(defaultMaxBatchSize, 0);
      out.max_batch_size = maxBatchSize;
      // Sic: Triton's message says "supporrted".
      log.warn(
        `autofilled max_batch_size to ${maxBatchSize} for model '${out.name}' since batching is supporrted but no max_batch_size is specified in model configuration. Must specify max_batch_size to utilize autofill with a larger max batch size`,
      );
    }
    if (maxBatchSize > 1 && !out.sequence_batching && !out.dynamic_batching) {
      out.dynamic_batching = emptyDynamicBatching();
    }
  } else if (maxBatchSize !== 0) {
    throw new InferError(
      'INVALID_ARG',
      `autofill failed for model '${out.name}': model does not support batching while non-zero max_batch_size is specified`,
    );
  }
  if (inputCount === 0) out.input = io.inputs.map((i) => toInput(i, maxBatchSize));
  if (outputCount === 0) out.output = io.outputs.map((o) => toOutput(o, maxBatchSize));
  return out;
}
