/** ValidateModelConfig's I/O part (ValidateModelIOConfig, ValidateIOShape, ValidateBatchIO), Triton's messages. */
import type { ModelConfig, ModelInput, ModelOutput } from './model-config.ts';
import { PLATFORMS } from './normalize.ts';
import { ConfigValidationError, fail } from './validation-error.ts';

const WILDCARD_DIM = -1;

function n(v: number | bigint): number {
  return typeof v === 'bigint' ? Number(v) : v;
}

/** triton::common::GetElementCount: -1 if any dim is variable, 0 for no dims. */
function elementCount(dims: readonly (number | bigint)[]): number {
  let count = 0;
  let first = true;
  for (const raw of dims) {
    const d = n(raw);
    if (d === WILDCARD_DIM) return -1;
    count = first ? d : count * d;
    first = false;
  }
  return count;
}

function chunkCounts(dims: readonly (number | bigint)[]): number[] {
  const out: number[] = [];
  let current = 1;
  for (const raw of dims) {
    const d = n(raw);
    if (d !== WILDCARD_DIM) current *= d;
    else {
      out.push(current);
      current = 1;
    }
  }
  out.push(current);
  return out;
}

function validateIOShape(io: ModelInput | ModelOutput, maxBatchSize: number, prefix: string, path: string): void {
  if (io.name === '') fail(`${prefix}must specify 'name'`, `${path}.name`);
  const p = `${prefix}'${io.name}' `;
  if (io.data_type === 'TYPE_INVALID') fail(`${p}must specify 'data_type'`, `${path}.data_type`);
  if (io.dims.length === 0) fail(`${p}must specify 'dims'`, `${path}.dims`);
  if (io.reshape && io.reshape.shape.length === 0 && maxBatchSize === 0) {
    fail(`${p}cannot have empty reshape for non-batching model as scalar tensors are not supported`, `${path}.reshape`);
  }
  for (const d of io.dims) {
    if (n(d) < 1 && n(d) !== WILDCARD_DIM) {
      fail(`${p}dimension must be integer >= 1, or ${WILDCARD_DIM} to indicate a variable-size dimension`, `${path}.dims`);
    }
  }
  if (!io.reshape) return;
  for (const d of io.reshape.shape) {
    if (n(d) < 1 && n(d) !== WILDCARD_DIM) {
      fail(
        `${p}reshape dimensions must be integer >= 1, or ${WILDCARD_DIM} to indicate a variable-size dimension`,
        `${path}.reshape`,
      );
    }
  }
  const dimsSize = elementCount(io.dims);
  const reshapeSize = elementCount(io.reshape.shape);
  // An empty reshape (scalar per batch item) matches dims with one element.
  if (dimsSize !== reshapeSize && (reshapeSize !== 0 || dimsSize !== 1)) {
    fail(`${p}has different size for dims and reshape`, `${path}.reshape`);
  }
  if (dimsSize === -1) {
    // Compare the element counts of the runs between variable-size dimensions: [2,4,-1,6] ~ [8,-1,1,6].
    const a = chunkCounts(io.dims);
    const b = chunkCounts(io.reshape.shape);
    if (a.length !== b.length) {
      fail(`${p}has different number of variable-size dimensions for dims and reshape`, `${path}.reshape`);
    }
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) fail(`${p}has different size for dims and reshape`, `${path}.reshape`);
    }
  }
}

function validateNonLinearFormatIO(io: ModelInput | ModelOutput, platform: string, isInput: boolean, path: string) {
  if (!io.is_non_linear_format_io) return;
  if (platform !== PLATFORMS.tensorrtPlan) {
    fail('Non-linear IO format is only supported for the TensorRT platform', `${path}.is_non_linear_format_io`);
  }
  if (io.dims.length !== 3) fail(`Non-linear IO format ${isInput ? 'input' : 'output'} requires 3 dims`, `${path}.dims`);
}

/** ValidateModelIOConfig: inputs, outputs, batch inputs/outputs; every message ends ` for <model>`. */
export function validateIO(config: ModelConfig): void {
  try {
    config.input.forEach((io, i) => {
      const path = `input[${i}]`;
      validateIOShape(io, config.max_batch_size, 'model input ', path);
      if ((io.format === 'FORMAT_NHWC' || io.format === 'FORMAT_NCHW') && io.dims.length !== 3) {
        fail('model input NHWC/NCHW require 3 dims', `${path}.format`);
      }
      if (config.platform !== PLATFORMS.tensorrtPlan && io.is_shape_tensor) {
        fail('shape tensors are only supported for TensorRT platform', `${path}.is_shape_tensor`);
      }
      validateNonLinearFormatIO(io, config.platform, true, path);
    });
    config.output.forEach((io, i) => {
      const path = `output[${i}]`;
      validateIOShape(io, config.max_batch_size, 'model output ', path);
      if (config.platform !== PLATFORMS.tensorrtPlan && io.is_shape_tensor) {
        fail('shape tensors are only supported for TensorRT platform', `${path}.is_shape_tensor`);
      }
      validateNonLinearFormatIO(io, config.platform, false, path);
    });
    validateBatchIO(config);
  } catch (e) {
    if (e instanceof ConfigValidationError) throw new ConfigValidationError(`${e.message} for ${config.name}`, e.fieldPath);
    throw e;
  }
}

function validateBatchIO(config: ModelConfig): void {
  const inputs = new Set(config.input.map((io) => io.name));
  const outputs = new Set(config.output.map((io) => io.name));
  config.batch_input.forEach((b, i) => {
    const path = `batch_input[${i}]`;
    if (b.source_input.length !== 1) {
      fail(`batch input kind '${b.kind}' expects 1 source input, got ${b.source_input.length}`, `${path}.source_input`);
    }
    if (b.data_type !== 'TYPE_INT32' && b.data_type !== 'TYPE_FP32') {
      fail('batch input data type must be TYPE_INT32 or TYPE_FP32', `${path}.data_type`);
    }
    for (const s of b.source_input) {
      if (!inputs.has(s)) fail(`unknown source input name '${s}'`, `${path}.source_input`);
    }
  });
  config.batch_output.forEach((b, i) => {
    const path = `batch_output[${i}]`;
    if (b.source_input.length !== 1) {
      fail(`batch output kind '${b.kind}' expects 1 source input, got ${b.source_input.length}`, `${path}.source_input`);
    }
    for (const s of b.source_input) {
      if (!inputs.has(s)) fail(`unknown source input name '${s}'`, `${path}.source_input`);
    }
    const seen = new Set<string>();
    for (const t of b.target_name) {
      if (!outputs.has(t)) fail(`unknown target output name '${t}'`, `${path}.target_name`);
      if (seen.has(t)) fail(`target output name '${t}' can only be specified once`, `${path}.target_name`);
      seen.add(t);
    }
  });
}
