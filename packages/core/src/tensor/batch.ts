/**
 * Batch helpers every backend and scheduler shares: concatenate a batch's inputs along dim 0 and
 * split outputs back per request by rows. Backends never re-implement these (docs/architecture.md §4).
 *
 * Ownership: `concatInputs` always writes into a fresh ArrayBuffer (safe to transfer to a worker;
 * request tensors may be slices of pooled HTTP buffers that must never be transferred).
 * `splitOutputs` returns zero-copy views into the batch outputs.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { InferRequest, InferResponse } from '../types.ts';
import { DATA_TYPE_SIZE } from './data-type.ts';
import { elementCount, type Tensor } from './tensor.ts';
import { readU32LE } from './bytes-elements.ts';

/**
 * The batch size of a request: dim 0 shared by its inputs when the model batches
 * (`max_batch_size > 0`), otherwise 1. Throws Triton's INVALID_ARG errors when inputs disagree,
 * lack a batch dim, or exceed `limit` (`max_batch_size`, or the rows a model that splits requests
 * accepts: scheduler/split-oversized.ts).
 */
export function batchSizeOf(
  request: InferRequest,
  config: Pick<ModelConfig, 'name' | 'max_batch_size'> & { readonly input: readonly { readonly name: string; readonly is_shape_tensor?: boolean }[] },
  limit: number = config.max_batch_size,
): number {
  if (config.max_batch_size <= 0) return 1;
  let size: number | undefined;
  for (const t of request.inputs) {
    if (isShapeTensor(config.input, t.name)) continue;
    if (t.shape.length === 0) {
      throw new InferError('INVALID_ARG', `input '${t.name}' has no shape but model requires batch dimension for '${config.name}'`);
    }
    const d = t.shape[0]!;
    if (size === undefined) size = d;
    else if (d !== size) {
      throw new InferError('INVALID_ARG', `input '${t.name}' batch size does not match other inputs for '${config.name}'`);
    }
  }
  size ??= 1;
  if (size > limit) {
    throw new InferError(
      'INVALID_ARG',
      `inference request batch-size must be <= ${limit} for '${config.name}'${limit > config.max_batch_size ? " (its 'tritium.split_rows')" : ''}`,
    );
  }
  return size;
}

/** Whether input `name` is a shape tensor (no batch dim). A loop, not `some`: this runs per request. */
function isShapeTensor(inputs: readonly { readonly name: string; readonly is_shape_tensor?: boolean }[], name: string): boolean {
  for (const i of inputs) if (i.is_shape_tensor && i.name === name) return true;
  return false;
}

/** Rows (dim 0) of a request: the first input's dim 0, 1 when it has no inputs or a scalar. */
export function rowsOf(request: InferRequest): number {
  const first = request.inputs[0];
  return first && first.shape.length > 0 ? first.shape[0]! : 1;
}

function findInput(request: InferRequest, name: string): Tensor {
  const t = request.inputs.find((i) => i.name === name);
  if (!t) throw new InferError('INVALID_ARG', `expected input '${name}' in request '${request.id}' for '${request.model}'`);
  return t;
}

/**
 * Concatenates input `name` of every request along dim 0 into one tensor backed by a fresh
 * ArrayBuffer. BYTES data is concatenated as is (each element keeps its length prefix). All
 * requests must agree on datatype and on every dim after the first (pad first, see `pad.ts`).
 */
export function concatInputs(batch: readonly InferRequest[], name: string): Tensor {
  if (batch.length === 0) throw new InferError('INTERNAL', `cannot concatenate input '${name}' of an empty batch`);
  const first = findInput(batch[0]!, name);
  const tail = first.shape.slice(1);
  let rows = 0;
  let bytes = 0;
  const parts: Tensor[] = [];
  for (const request of batch) {
    const t = findInput(request, name);
    if (t.datatype !== first.datatype) {
      throw new InferError(
        'INVALID_ARG',
        `input '${name}' data-type ${t.datatype} does not match ${first.datatype} of other requests in the batch for '${request.model}'`,
      );
    }
    if (t.shape.length !== first.shape.length || t.shape.some((d, i) => i > 0 && d !== first.shape[i])) {
      throw new InferError(
        'INVALID_ARG',
        `input '${name}' shape [${t.shape.join(',')}] does not match [${first.shape.join(',')}] of other requests in the batch for '${request.model}'`,
      );
    }
    rows += t.shape.length > 0 ? t.shape[0]! : 1;
    bytes += t.data.byteLength;
    parts.push(t);
  }
  const data = new Uint8Array(new ArrayBuffer(bytes));
  let offset = 0;
  for (const t of parts) {
    data.set(t.data, offset);
    offset += t.data.byteLength;
  }
  return { name, datatype: first.datatype, shape: first.shape.length === 0 ? [rows] : [rows, ...tail], data };
}

/** Splits one tensor into consecutive row blocks (zero-copy views). `rows` must sum to its dim 0. */
export function splitRows(tensor: Tensor, rows: readonly number[]): Tensor[] {
  const total = rows.reduce((a, b) => a + b, 0);
  const dim0 = tensor.shape[0];
  if (tensor.shape.length === 0 || dim0 !== total) {
    throw new InferError(
      'INTERNAL',
      `output '${tensor.name}' has shape [${tensor.shape.join(',')}], expected ${total} rows to split across ${rows.length} requests`,
    );
  }
  const tail = tensor.shape.slice(1);
  const perRow = elementCount(tail);
  const size = DATA_TYPE_SIZE[tensor.datatype];
  const out: Tensor[] = [];
  if (size > 0) {
    let offset = 0;
    for (const r of rows) {
      const len = r * perRow * size;
      out.push({ name: tensor.name, datatype: tensor.datatype, shape: [r, ...tail], data: tensor.data.subarray(offset, offset + len) });
      offset += len;
    }
    return out;
  }
  // BYTES: walk the length prefixes to find each block's byte range.
  let offset = 0;
  for (const r of rows) {
    const start = offset;
    for (let e = 0; e < r * perRow; e++) {
      if (offset + 4 > tensor.data.byteLength) {
        throw new InferError('INTERNAL', `output '${tensor.name}' holds fewer BYTES elements than its shape [${tensor.shape.join(',')}]`);
      }
      offset += 4 + readU32LE(tensor.data, offset);
    }
    if (offset > tensor.data.byteLength) {
      throw new InferError('INTERNAL', `malformed BYTES data in output '${tensor.name}'`);
    }
    out.push({ name: tensor.name, datatype: tensor.datatype, shape: [r, ...tail], data: tensor.data.subarray(start, offset) });
  }
  return out;
}

export interface SplitOptions {
  /** Model and version written into each response. */
  readonly model: string;
  readonly version: number;
  /** Rows per request; default: each request's dim 0 (`rowsOf`). */
  readonly rows?: readonly number[];
}

/**
 * Splits batch outputs by rows back into one InferResponse per request, in batch order. Each
 * request receives only the outputs it asked for (all when it named none).
 */
export function splitOutputs(batch: readonly InferRequest[], outputs: readonly Tensor[], options: SplitOptions): InferResponse[] {
  const rows = options.rows ?? batch.map(rowsOf);
  if (rows.length !== batch.length) throw new InferError('INTERNAL', `splitOutputs: ${rows.length} row counts for ${batch.length} requests`);
  const pieces = outputs.map((o) => splitRows(o, rows));
  return batch.map((request, i) => {
    const wanted = request.outputs && request.outputs.length > 0 ? new Set(request.outputs.map((o) => o.name)) : undefined;
    const mine: Tensor[] = [];
    outputs.forEach((o, k) => {
      if (!wanted || wanted.has(o.name)) mine.push(pieces[k]![i]!);
    });
    return { id: request.id, model: options.model, version: options.version, outputs: mine };
  });
}
