/**
 * Request checks done before a request reaches a scheduler, with Triton's messages
 * (core `infer_request.cc`): input count and names, datatypes, shapes against the config dims
 * (with the batch dimension when max_batch_size > 0), batch size, byte sizes, requested outputs.
 * All INVALID_ARG, prefixed `[request id: <id>] ` as Triton's request log tag.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig, ModelInput } from '../config/model-config.ts';
import { configToWireDataType } from '../tensor/data-type.ts';
import { decodeBytesElements, elementCount, expectedByteSize } from '../tensor/tensor.ts';
import type { InferRequest } from '../types.ts';
import { shapeToString } from '../backend/compare-dims.ts';

const BATCH_NOTE =
  ' NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.';

/** Triton's request log tag. */
export function requestTag(request: Pick<InferRequest, 'id'>): string {
  return `[request id: ${request.id || '<id_unknown>'}] `;
}

const quotedList = (names: readonly string[]): string => `[${names.map((n) => `'${n}'`).join(',')}]`;

function invalid(request: InferRequest, message: string): InferError {
  return new InferError('INVALID_ARG', requestTag(request) + message);
}

function shapeMatches(expected: readonly number[], actual: readonly number[]): boolean {
  return expected.length === actual.length && expected.every((d, i) => d === -1 || d === actual[i]);
}

/** Input specs by name, built once per (immutable) loaded config. */
const inputIndex = new WeakMap<ModelConfig, ReadonlyMap<string, ModelInput>>();

function inputsOf(config: ModelConfig): ReadonlyMap<string, ModelInput> {
  let index = inputIndex.get(config);
  if (!index) {
    index = new Map(config.input.map((i) => [i.name, i]));
    inputIndex.set(config, index);
  }
  return index;
}

/**
 * Throws INVALID_ARG when the request does not fit the model's config. Runs synchronously on the
 * calling thread before enqueue, so a bad request never occupies a queue slot.
 */
export function validateRequest(config: ModelConfig, request: InferRequest): void {
  const model = config.name;
  const inputs = inputsOf(config);
  const seen = new Set<string>();
  for (const tensor of request.inputs) {
    if (!inputs.has(tensor.name)) {
      throw invalid(request, `unexpected inference input '${tensor.name}' for model '${model}'`);
    }
    if (seen.has(tensor.name)) {
      throw invalid(request, `input '${tensor.name}' already exists in request`);
    }
    seen.add(tensor.name);
  }

  let allPresent = true;
  for (const i of config.input) if (!i.optional && !seen.has(i.name)) allPresent = false;
  if (!allPresent) {
    const required = config.input.filter((i) => !i.optional);
    const missing = required.filter((i) => !seen.has(i.name)).map((i) => i.name);
    const got = request.inputs.map((t) => t.name);
    const optional = config.input.length - required.length;
    const expected =
      optional > 0
        ? `expected number of inputs between ${required.length} and ${config.input.length}`
        : `expected ${config.input.length} inputs`;
    throw invalid(
      request,
      `${expected} but got ${request.inputs.length} inputs for model '${model}'. Got input(s) ${quotedList(got)}, but missing required input(s) ${quotedList(missing)}. Please provide all required input(s).`,
    );
  }

  const batching = config.max_batch_size > 0;
  if (batching) {
    let batchSize: number | undefined;
    for (const tensor of request.inputs) {
      if (tensor.shape.length === 0) {
        throw invalid(request, `input '${tensor.name}' has no shape but model requires batch dimension for '${model}'`);
      }
      const spec = inputs.get(tensor.name)!;
      // Shape tensors (TensorRT) carry no batch dimension; ragged inputs may differ per request.
      if (spec.allow_ragged_batch || spec.is_shape_tensor) continue;
      if (batchSize === undefined) batchSize = tensor.shape[0]!;
      else if (tensor.shape[0] !== batchSize) {
        throw invalid(request, `input '${tensor.name}' batch size does not match other inputs for '${model}'`);
      }
    }
    if (batchSize !== undefined && batchSize > config.max_batch_size) {
      throw invalid(request, `inference request batch-size must be <= ${config.max_batch_size} for '${model}'`);
    }
  }

  for (const tensor of request.inputs) {
    const spec = inputs.get(tensor.name)!;
    const expectedType = configToWireDataType(spec.data_type);
    if (expectedType && tensor.datatype !== expectedType) {
      throw invalid(
        request,
        `inference input '${tensor.name}' data-type is '${tensor.datatype}', but model '${model}' expects '${expectedType}'`,
      );
    }
    // A reshape with `shape: []` may be declared with dims [1]; the request then sends the dims.
    const dims = spec.dims;
    const expectedShape = batching && !spec.is_shape_tensor ? [-1, ...dims] : [...dims];
    if (!spec.allow_ragged_batch && !shapeMatches(expectedShape, tensor.shape)) {
      throw invalid(
        request,
        `unexpected shape for input '${tensor.name}' for model '${model}'. Expected ${shapeToString(expectedShape)}, got ${shapeToString(tensor.shape)}.${batching ? BATCH_NOTE : ''}`,
      );
    }
    if (tensor.shape.some((d) => !Number.isInteger(d) || d < 0)) {
      throw invalid(request, `unexpected shape for input '${tensor.name}' for model '${model}'. Expected ${shapeToString(expectedShape)}, got ${shapeToString(tensor.shape)}`);
    }
    const byteSize = expectedByteSize(tensor.datatype, tensor.shape);
    if (byteSize !== undefined) {
      if (tensor.data.byteLength !== byteSize) {
        throw invalid(
          request,
          `input byte size mismatch for input '${tensor.name}' for model '${model}'. Expected ${byteSize}, got ${tensor.data.byteLength}`,
        );
      }
    } else {
      let count: number;
      try {
        count = decodeBytesElements(tensor.data, tensor.name).length;
      } catch (err) {
        throw invalid(request, InferError.from(err).message);
      }
      if (count !== elementCount(tensor.shape)) {
        throw invalid(
          request,
          `expected ${elementCount(tensor.shape)} string elements for inference input '${tensor.name}' for model '${model}', got ${count}`,
        );
      }
    }
  }

  const outputs = new Set(config.output.map((o) => o.name));
  for (const requested of request.outputs ?? []) {
    if (!outputs.has(requested.name)) {
      throw invalid(request, `unexpected inference output '${requested.name}' for model '${model}'`);
    }
  }
}
