/**
 * Request checks done before a request reaches a scheduler, with Triton's messages
 * (core `infer_request.cc`): input count and names, datatypes, shapes against the config dims
 * (with the batch dimension when max_batch_size > 0), batch size, byte sizes, requested outputs.
 * All INVALID_ARG, prefixed `[request id: <id>] ` as Triton's request log tag.
 */
import { InferError } from '../errors.ts';
import type { ModelInput } from '../config/model-config.ts';
import { configToWireDataType, wireToConfigDataType, type DataType } from '../tensor/data-type.ts';
import { elementCount, expectedByteSize } from '../tensor/tensor.ts';
import { countBytesElements } from '../tensor/bytes-elements.ts';
import { batchSizeOf } from '../tensor/batch.ts';
import type { InferRequest } from '../types.ts';
import { shapeToString } from '../backend/compare-dims.ts';

/** What request validation reads of an input's config (a ModelInput is one). */
export type RequestInputSpec = Pick<ModelInput, 'name' | 'data_type' | 'dims'> &
  Partial<Pick<ModelInput, 'optional' | 'allow_ragged_batch' | 'is_shape_tensor'>>;

/**
 * What request validation reads of a model's config: a ModelConfig is one, and a backend's worker
 * builds one from the tensors it was planned with, so server and backends apply the same rules.
 */
export interface RequestSpec {
  readonly name: string;
  readonly max_batch_size: number;
  readonly input: readonly RequestInputSpec[];
  readonly output: readonly { readonly name: string }[];
}

const BATCH_NOTE =
  ' NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.';

/** Triton's request log tag. */
export function requestTag(request: Pick<InferRequest, 'id'>): string {
  return `[request id: ${request.id || '<id_unknown>'}] `;
}

const quotedList = (names: readonly string[]): string => `[${names.map((n) => `'${n}'`).join(',')}]`;

/**
 * Triton's words for a fixed-size input whose bytes disagree with its shape (the shared-memory path
 * checks it too, before copying a region).
 */
export function inputByteSizeMismatch(input: string, model: string, expected: number, got: number): string {
  return `input byte size mismatch for input '${input}' for model '${model}'. Expected ${expected}, got ${got}`;
}

function invalid(request: InferRequest, message: string): InferError {
  return new InferError('INVALID_ARG', requestTag(request) + message);
}

/**
 * Whether `actual` fits `dims` (-1 matches any size), after one leading batch dim of any size when
 * `batchDim`. Compared in place: building `[-1, ...dims]` for it cost an array per input per request.
 */
function shapeMatches(dims: readonly number[], batchDim: boolean, actual: readonly number[]): boolean {
  const lead = batchDim ? 1 : 0;
  if (actual.length !== dims.length + lead) return false;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i]!;
    if (d !== -1 && d !== actual[i + lead]) return false;
  }
  return true;
}

/** The shape a request's input must have, for messages: `dims`, after -1 for the batch dim when `batchDim`. */
function expectedShape(dims: readonly number[], batchDim: boolean): number[] {
  return batchDim ? [-1, ...dims] : [...dims];
}

function isShapeValid(shape: readonly number[]): boolean {
  for (const d of shape) if (!Number.isInteger(d) || d < 0) return false;
  return true;
}

/** An input as backend workers are planned with it: wire datatype, config dims, flags. */
export interface PlannedInput {
  readonly name: string;
  readonly datatype: DataType;
  readonly dims: readonly number[];
  readonly optional?: boolean;
  readonly ragged?: boolean;
  readonly isShapeTensor?: boolean;
}

/** The RequestSpec of a model whose tensors a backend worker holds in planned (wire) form. */
export function requestSpecOf(model: string, maxBatchSize: number, inputs: readonly PlannedInput[], outputs: readonly { readonly name: string }[]): RequestSpec {
  return {
    name: model,
    max_batch_size: maxBatchSize,
    input: inputs.map((p) => ({
      name: p.name,
      data_type: wireToConfigDataType(p.datatype),
      dims: [...p.dims],
      optional: p.optional === true,
      allow_ragged_batch: p.ragged === true,
      is_shape_tensor: p.isShapeTensor === true,
    })),
    output: outputs.map((o) => ({ name: o.name })),
  };
}

/** Input specs by name, built once per (immutable) loaded config or spec. */
const inputIndex = new WeakMap<RequestSpec, ReadonlyMap<string, RequestInputSpec>>();

function inputsOf(config: RequestSpec): ReadonlyMap<string, RequestInputSpec> {
  let index = inputIndex.get(config);
  if (!index) {
    index = new Map(config.input.map((i) => [i.name, i]));
    inputIndex.set(config, index);
  }
  return index;
}

/** Output names, built once per config or spec (only requests that name outputs read it). */
const outputIndex = new WeakMap<RequestSpec, ReadonlySet<string>>();

function outputsOf(config: RequestSpec): ReadonlySet<string> {
  let names = outputIndex.get(config);
  if (!names) {
    names = new Set(config.output.map((o) => o.name));
    outputIndex.set(config, names);
  }
  return names;
}

/** Triton's refusal of a request that lacks a required input, naming what it sent and what it misses. */
function missingInputs(config: RequestSpec, request: InferRequest, seen: ReadonlySet<string>): InferError {
  const required = config.input.filter((i) => !i.optional);
  const missing = required.filter((i) => !seen.has(i.name)).map((i) => i.name);
  const got = request.inputs.map((t) => t.name);
  const optional = config.input.length - required.length;
  const expected =
    optional > 0 ? `expected number of inputs between ${required.length} and ${config.input.length}` : `expected ${config.input.length} inputs`;
  return invalid(
    request,
    `${expected} but got ${request.inputs.length} inputs for model '${config.name}'. Got input(s) ${quotedList(got)}, but missing required input(s) ${quotedList(missing)}. Please provide all required input(s).`,
  );
}

/**
 * Throws INVALID_ARG when the request does not fit the model's config; returns its batch size (1
 * for a model that does not batch). The server runs it synchronously before enqueue, so a bad
 * request never occupies a queue slot; backends run it again on what reaches them directly.
 */
export function validateRequest(config: RequestSpec, request: InferRequest, maxRows: number = config.max_batch_size): number {
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
  if (!allPresent) throw missingInputs(config, request, seen);

  const batching = config.max_batch_size > 0;
  let batchSize: number;
  try {
    batchSize = batchSizeOf(request, config, maxRows);
  } catch (err) {
    throw invalid(request, InferError.from(err).message);
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
    const batchDim = batching && !spec.is_shape_tensor;
    if (!spec.allow_ragged_batch && !shapeMatches(dims, batchDim, tensor.shape)) {
      throw invalid(
        request,
        `unexpected shape for input '${tensor.name}' for model '${model}'. Expected ${shapeToString(expectedShape(dims, batchDim))}, got ${shapeToString(tensor.shape)}.${batching ? BATCH_NOTE : ''}`,
      );
    }
    if (!isShapeValid(tensor.shape)) {
      throw invalid(request, `unexpected shape for input '${tensor.name}' for model '${model}'. Expected ${shapeToString(expectedShape(dims, batchDim))}, got ${shapeToString(tensor.shape)}`);
    }
    const byteSize = expectedByteSize(tensor.datatype, tensor.shape);
    if (byteSize !== undefined) {
      if (tensor.data.byteLength !== byteSize) {
        throw invalid(request, inputByteSizeMismatch(tensor.name, model, byteSize, tensor.data.byteLength));
      }
    } else {
      // Counted by walking the length prefixes: no object per element, however many the data holds.
      const expected = elementCount(tensor.shape);
      let count: number;
      try {
        count = countBytesElements(tensor.data, tensor.name);
      } catch (err) {
        throw invalid(request, InferError.from(err).message);
      }
      if (count !== expected) {
        throw invalid(request, `expected ${expected} string elements for inference input '${tensor.name}' for model '${model}', got ${count}`);
      }
    }
  }

  const requestedOutputs = request.outputs;
  if (!requestedOutputs || requestedOutputs.length === 0) return batchSize;
  const outputs = outputsOf(config);
  for (const requested of requestedOutputs) {
    if (!outputs.has(requested.name)) {
      throw invalid(request, `unexpected inference output '${requested.name}' for model '${model}'`);
    }
  }
  return batchSize;
}
