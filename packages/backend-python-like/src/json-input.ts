import { InferError, type DataType, type ModelConfig, type Tensor, type TypedArray } from '@tritium/core';
import { TYPED_ARRAY_CONSTRUCTORS, configToWireDataType, encodeBytesElements, elementCount } from '@tritium/core/tensor';

/** `{"shape": [...], "data": [...]}` or a nested array whose shape is inferred. */
export type JsonTensorValue = unknown;

function inferShape(value: unknown, name: string): number[] {
  const shape: number[] = [];
  let v = value;
  while (Array.isArray(v)) {
    shape.push(v.length);
    if (v.length === 0) break;
    v = v[0];
  }
  // Every sub-array must have the same length (no ragged nesting).
  const check = (node: unknown, depth: number): void => {
    if (depth === shape.length) {
      if (Array.isArray(node)) throw new InferError('INVALID_ARG', `input '${name}': ragged nested array (deeper than its first element)`);
      return;
    }
    if (!Array.isArray(node) || node.length !== shape[depth]) {
      throw new InferError('INVALID_ARG', `input '${name}': ragged nested array at depth ${depth} (expected ${shape[depth]} elements)`);
    }
    for (const child of node) check(child, depth + 1);
  };
  check(value, 0);
  return shape;
}

function typed(datatype: DataType, values: unknown[], name: string): TypedArray {
  const bad = (i: number): never => {
    throw new InferError('INVALID_ARG', `input '${name}': element ${i} (${JSON.stringify(values[i])}) is not a valid ${datatype} value`);
  };
  switch (datatype) {
    case 'INT64':
    case 'UINT64': {
      const out = datatype === 'INT64' ? new BigInt64Array(values.length) : new BigUint64Array(values.length);
      values.forEach((v, i) => {
        if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^-?\d+$/.test(v))) out[i] = BigInt(v);
        else bad(i);
      });
      return out;
    }
    case 'BOOL':
      return Uint8Array.from(values, (v, i) => (typeof v === 'boolean' ? (v ? 1 : 0) : bad(i)));
    case 'FP16':
    case 'BF16':
      throw new InferError('INVALID_ARG', `input '${name}': ${datatype} inputs are not supported from JSON`);
    default: {
      const out = new TYPED_ARRAY_CONSTRUCTORS[datatype](values.length);
      values.forEach((v, i) => (out[i] = typeof v === 'number' ? v : bad(i)));
      return out;
    }
  }
}

function matches(shape: readonly number[], dims: readonly number[]): boolean {
  return shape.length === dims.length && shape.every((d, i) => dims[i] === -1 || dims[i] === d);
}

/**
 * The shape a nested array stands for, as the config implies it (`dims`, batching):
 * - one more dimension than `dims`: already batched, as written;
 * - `dims` itself: one row (`[1, ...dims]` when the model batches);
 * - otherwise, when `dims` are all fixed and the values fill whole rows of them: that many rows
 *   (`TEXT=["a","b"]` for dims [1] is two rows, [2,1]; without batching, one `dims`-shaped value);
 * - else one row as written (the server's check then names what it expected).
 */
export function impliedShape(written: readonly number[], dims: readonly number[], batching: boolean): number[] {
  if (batching && written.length === dims.length + 1) return [...written];
  if (matches(written, dims)) return batching ? [1, ...written] : [...written];
  const perRow = elementCount(dims);
  const total = elementCount(written);
  if (dims.every((d) => d >= 0) && written.length <= dims.length && (batching ? perRow > 0 && total % perRow === 0 : total === perRow)) {
    return batching ? [total / perRow, ...dims] : [...dims];
  }
  return batching && written.length === dims.length ? [1, ...written] : [...written];
}

/**
 * Builds an input tensor from JSON, its datatype from the config. A nested array's shape is
 * inferred and read as the config implies (see impliedShape); `{"shape", "data"}` is taken as
 * written, except that for a batching model a shape of exactly the config's rank gets a batch
 * dimension of 1 in front.
 */
export function tensorFromJson(config: ModelConfig, name: string, value: JsonTensorValue): Tensor {
  const spec = config.input.find((i) => i.name === name);
  if (!spec) {
    throw new InferError(
      'INVALID_ARG',
      `unexpected inference input '${name}' for model '${config.name}' (inputs: ${config.input.map((i) => i.name).join(', ')})`,
    );
  }
  const datatype = configToWireDataType(spec.data_type);
  if (!datatype) throw new InferError('INVALID_ARG', `input '${name}' has no usable data_type in the config`);
  let shape: number[];
  let flat: unknown[];
  const batching = config.max_batch_size > 0;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'data' in value) {
    const v = value as { shape?: unknown; data: unknown };
    flat = Array.isArray(v.data) ? (v.data as unknown[]).flat(Infinity) : [v.data];
    shape = Array.isArray(v.shape) ? (v.shape as number[]) : [flat.length];
    if (batching && shape.length === spec.dims.length) shape = [1, ...shape];
  } else {
    flat = Array.isArray(value) ? (value as unknown[]).flat(Infinity) : [value];
    shape = impliedShape(inferShape(value, name), spec.dims, batching);
  }
  if (elementCount(shape) !== flat.length) {
    throw new InferError('INVALID_ARG', `input '${name}': shape [${shape.join(',')}] does not match ${flat.length} data elements`);
  }
  if (datatype === 'BYTES') {
    const elements = flat.map((v, i) => {
      if (typeof v !== 'string') throw new InferError('INVALID_ARG', `input '${name}': element ${i} is not a string (BYTES)`);
      return v;
    });
    return { name, datatype, shape, data: encodeBytesElements(elements) };
  }
  const values = typed(datatype, flat, name);
  return { name, datatype, shape, data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
}
