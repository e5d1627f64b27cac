/**
 * Builds the input tensors of a `model_warmup` sample (Triton's ModelWarmup): zero data, random
 * data, or bytes read from `<model>/warmup/<input_data_file>`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { randomFillSync } from 'node:crypto';
import { InferError } from '../errors.ts';
import type { ModelConfig, ModelWarmup, ModelWarmupInput } from '../config/model-config.ts';
import { configToWireDataType, DATA_TYPE_SIZE } from '../tensor/data-type.ts';
import { elementCount, type Tensor } from '../tensor/tensor.ts';
import { encodeBytesElements } from '../tensor/bytes-elements.ts';
import { joinInside } from '../repository/safe-path.ts';

/**
 * Beyond Triton (which has none): what one warmup sample may make before it runs. Its requests
 * (`batch_size`, each a copy of the inputs) are built at once, so without a bound `dims: [30000,
 * 30000]` or `batch_size: 2000000000` under a huge `max_batch_size` would allocate gigabytes on the
 * main thread from one config (the load API accepts one from any client). `count` repeats run one
 * after another while every other load waits, so it is bounded too.
 */
export const MAX_WARMUP_SAMPLE_BYTES = 256 * 1024 * 1024;
export const MAX_WARMUP_REQUESTS = 1024;
export const MAX_WARMUP_REPEATS = 1000;

function invalid(sample: ModelWarmup, message: string): InferError {
  return new InferError('INVALID_ARG', `warmup setting '${sample.name}': ${message}`);
}

async function inputData(modelDir: string, sample: ModelWarmup, name: string, spec: ModelWarmupInput, count: number): Promise<Uint8Array> {
  const wire = configToWireDataType(spec.data_type);
  if (!wire) throw invalid(sample, `input '${name}' has invalid data_type ${spec.data_type}`);
  const size = DATA_TYPE_SIZE[wire];
  if (spec.input_data_file) {
    const file = joinInside(path.join(modelDir, 'warmup'), spec.input_data_file, 'warmup input_data_file');
    const bytes = new Uint8Array(await readFile(file).catch((err: Error) => {
      throw invalid(sample, `unable to read input data file '${spec.input_data_file}': ${err.message}`);
    }));
    if (size === 0) return bytes;
    if (bytes.byteLength < size * count) {
      throw invalid(
        sample,
        `input '${name}' expects ${size * count} bytes, but the data provided from ${spec.input_data_file} only has ${bytes.byteLength} bytes`,
      );
    }
    return bytes.slice(0, size * count);
  }
  // BYTES elements are empty strings for zero and random data alike (each a 0 length prefix).
  if (size === 0) return encodeBytesElements(new Array<string>(count).fill(''));
  const out = new Uint8Array(size * count);
  if (spec.random_data) {
    randomFillSync(out);
    // Random floats could be NaN/Inf bit patterns; keep them finite by clearing exponent high bits.
    if (wire === 'FP32' || wire === 'FP64' || wire === 'FP16' || wire === 'BF16') {
      for (let i = size - 1; i < out.length; i += size) out[i] = out[i]! & 0x3f;
    }
  }
  return out;
}

/**
 * The requests of one warmup sample: `batch_size` requests (at least 1), each of batch 1 when the
 * model batches. Every variable dimension must be given in the sample's dims.
 */
export async function warmupTensors(config: ModelConfig, modelDir: string, sample: ModelWarmup): Promise<Tensor[][]> {
  const batching = config.max_batch_size > 0;
  const requests = Math.max(1, sample.batch_size);
  if (batching && requests > config.max_batch_size) {
    throw invalid(sample, `batch_size ${requests} exceeds max_batch_size ${config.max_batch_size}`);
  }
  if (requests > MAX_WARMUP_REQUESTS) throw invalid(sample, `batch_size ${requests} is more than the ${MAX_WARMUP_REQUESTS} requests a warmup sample may make`);
  if (sample.count > MAX_WARMUP_REPEATS) throw invalid(sample, `count ${sample.count} is more than the ${MAX_WARMUP_REPEATS} repeats a warmup sample may run`);
  let bytes = 0;
  for (const [name, spec] of Object.entries(sample.inputs)) {
    if (spec.dims.some((d) => d < 0)) {
      throw invalid(sample, `expects all variable-size dimensions are specified for input '${name}'`);
    }
    // BYTES zero/random data is a 4-byte length per element; a data file is read whole.
    const wire = configToWireDataType(spec.data_type);
    bytes += elementCount(spec.dims) * (wire ? DATA_TYPE_SIZE[wire] || 4 : 0) * requests;
    if (bytes > MAX_WARMUP_SAMPLE_BYTES) {
      throw invalid(sample, `input '${name}' with dims [${spec.dims.join(',')}] makes the sample's ${requests} request(s) more than ${MAX_WARMUP_SAMPLE_BYTES} bytes`);
    }
  }
  const tensors: Tensor[] = [];
  for (const [name, spec] of Object.entries(sample.inputs)) {
    const shape = batching ? [1, ...spec.dims] : [...spec.dims];
    const data = await inputData(modelDir, sample, name, spec, elementCount(shape));
    tensors.push({ name, datatype: configToWireDataType(spec.data_type)!, shape, data });
  }
  return Array.from({ length: requests }, () => tensors.map((t) => ({ ...t, data: t.data.slice() })));
}
