/**
 * Padding-aware batching helpers (beyond Triton). A model opts in per input through config
 * `parameters` whose key is `tritium.pad.<INPUT_NAME>` and whose `string_value` is the pad value
 * (a number for numeric types, `true`/`false`/number for BOOL, any string for BYTES):
 *
 *     parameters { key: "tritium.pad.INPUT_IDS" value: { string_value: "0" } }
 *
 * Triton's parser accepts this (parameters is a free-form map) and ignores it. Requests whose
 * variable dims (after dim 0) differ are padded at the end of each dim to the longest in the batch.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import type { InferRequest } from '../types.ts';
import { DATA_TYPE_SIZE, configToWireDataType, type DataType } from './data-type.ts';
import { elementCount, type Tensor } from './tensor.ts';
import { BytesWriter, bytesElementOffsets, encodeBytesElements } from './bytes-elements.ts';

/** Config parameter prefix that declares an input paddable. */
export const PAD_PARAMETER_PREFIX = 'tritium.pad.';
/**
 * Config parameter prefix that trims an output back to a request's own length:
 * `tritium.unpad.<OUTPUT>` = `<INPUT>` cuts the output's dim 1 to the request's original dim 1 of
 * that (paddable) input.
 */
export const UNPAD_PARAMETER_PREFIX = 'tritium.unpad.';

/** One encoded element of `datatype` holding `value` (BYTES: length prefix + UTF-8). */
export function encodePadValue(datatype: DataType, value: string): Uint8Array {
  if (datatype === 'BYTES') return encodeBytesElements([value]);
  const size = DATA_TYPE_SIZE[datatype];
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  const text = value.trim();
  const num = text === 'true' ? 1 : text === 'false' ? 0 : Number(text);
  const isInt = datatype.startsWith('INT') || datatype.startsWith('UINT') || datatype === 'BOOL';
  if (text === '' || (isInt && !/^-?\d+$/.test(text) && text !== 'true' && text !== 'false') || Number.isNaN(num)) {
    throw new InferError('INVALID_ARG', `pad value '${value}' is not a valid ${datatype}`);
  }
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
      view.setUint8(0, num);
      break;
    case 'INT8':
      view.setInt8(0, num);
      break;
    case 'UINT16':
      view.setUint16(0, num, true);
      break;
    case 'INT16':
      view.setInt16(0, num, true);
      break;
    case 'UINT32':
      view.setUint32(0, num, true);
      break;
    case 'INT32':
      view.setInt32(0, num, true);
      break;
    case 'UINT64':
      view.setBigUint64(0, BigInt(text), true);
      break;
    case 'INT64':
      view.setBigInt64(0, BigInt(text), true);
      break;
    case 'FP32':
      view.setFloat32(0, num, true);
      break;
    case 'FP64':
      view.setFloat64(0, num, true);
      break;
    case 'FP16':
      view.setUint16(0, toHalfBits(num), true);
      break;
    case 'BF16': {
      const f = new DataView(new ArrayBuffer(4));
      f.setFloat32(0, num, true);
      view.setUint16(0, f.getUint32(0, true) >>> 16, true);
      break;
    }
  }
  return out;
}

/** IEEE 754 binary16 bits of `v` (round toward zero; pad values are small integers in practice). */
function toHalfBits(v: number): number {
  const f = new DataView(new ArrayBuffer(4));
  f.setFloat32(0, v, true);
  const x = f.getUint32(0, true);
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (((x >>> 23) & 0xff) === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 0x1f) return sign | 0x7c00;
  if (exp <= 0) return exp < -10 ? sign : sign | ((mant | 0x800000) >> (14 - exp));
  return sign | (exp << 10) | (mant >> 13);
}

/**
 * Paddable inputs of a model: input name → encoded pad element. Throws INVALID_ARG when a
 * `tritium.pad.*` key names no input or its value does not parse for the input's type.
 */
export function paddingSpecFromConfig(config: Pick<ModelConfig, 'name' | 'input' | 'parameters'>): Map<string, Uint8Array> {
  const spec = new Map<string, Uint8Array>();
  for (const [key, param] of Object.entries(config.parameters ?? {})) {
    if (!key.startsWith(PAD_PARAMETER_PREFIX)) continue;
    const inputName = key.slice(PAD_PARAMETER_PREFIX.length);
    const input = config.input.find((i) => i.name === inputName);
    if (!input) {
      throw new InferError('INVALID_ARG', `parameter '${key}' names unknown input '${inputName}' for '${config.name}'`);
    }
    const datatype = configToWireDataType(input.data_type);
    if (!datatype) throw new InferError('INVALID_ARG', `input '${inputName}' has no data type for '${config.name}'`);
    spec.set(inputName, encodePadValue(datatype, param.string_value));
  }
  return spec;
}

/**
 * Outputs to trim after padded batching: output name → the paddable input whose original dim 1 it
 * follows. Throws INVALID_ARG for unknown names or an input that is not declared paddable.
 */
export function unpaddingSpecFromConfig(config: Pick<ModelConfig, 'name' | 'input' | 'output' | 'parameters'>): Map<string, string> {
  const spec = new Map<string, string>();
  for (const [key, param] of Object.entries(config.parameters ?? {})) {
    if (!key.startsWith(UNPAD_PARAMETER_PREFIX)) continue;
    const outputName = key.slice(UNPAD_PARAMETER_PREFIX.length);
    const inputName = param.string_value;
    if (!config.output.some((o) => o.name === outputName)) {
      throw new InferError('INVALID_ARG', `parameter '${key}' names unknown output '${outputName}' for '${config.name}'`);
    }
    if (!config.parameters[PAD_PARAMETER_PREFIX + inputName]) {
      throw new InferError('INVALID_ARG', `parameter '${key}' names input '${inputName}', which has no '${PAD_PARAMETER_PREFIX}${inputName}' for '${config.name}'`);
    }
    spec.set(outputName, inputName);
  }
  return spec;
}

/** Copies the leading block of `shape` (same rank, each dim ≤ the tensor's) out of `tensor`. */
export function trimTensor(tensor: Tensor, shape: readonly number[]): Tensor {
  const src = tensor.shape;
  if (src.length !== shape.length || shape.some((d, i) => d > src[i]!)) {
    throw new InferError('INTERNAL', `cannot trim '${tensor.name}' of shape [${src.join(',')}] to [${shape.join(',')}]`);
  }
  if (src.every((d, i) => d === shape[i])) return tensor;
  const rank = src.length;
  // Flat index in the trimmed tensor → flat index in the source.
  const mapIndex = (flat: number): number => {
    let out = 0;
    let stride = 1;
    for (let d = rank - 1; d >= 0; d--) {
      const idx = flat % shape[d]!;
      flat = Math.floor(flat / shape[d]!);
      out += idx * stride;
      stride *= src[d]!;
    }
    return out;
  };
  const total = elementCount(shape);
  if (tensor.datatype === 'BYTES') {
    const at = bytesElementOffsets(tensor.data, tensor.name);
    const out = new BytesWriter(tensor.data.byteLength);
    for (let i = 0; i < total; i++) {
      const k = mapIndex(i);
      out.addRaw(tensor.data, at[k]!, at[k + 1]!);
    }
    return { name: tensor.name, datatype: 'BYTES', shape: [...shape], data: out.finish() };
  }
  const size = DATA_TYPE_SIZE[tensor.datatype];
  const data = new Uint8Array(new ArrayBuffer(total * size));
  const last = shape[rank - 1] ?? 1;
  const runBytes = last * size;
  const runs = last === 0 ? 0 : total / last;
  for (let r = 0; r < runs; r++) {
    const from = mapIndex(r * last) * size;
    data.set(tensor.data.subarray(from, from + runBytes), r * runBytes);
  }
  return { name: tensor.name, datatype: tensor.datatype, shape: [...shape], data };
}

/**
 * Trims the outputs named in `spec` of a response to a padded request back to the original
 * request's dim 1 of the matching input. Responses to unpadded requests come back unchanged.
 */
export function unpadResponse<R extends { outputs: readonly Tensor[] }>(response: R, original: InferRequest, spec: ReadonlyMap<string, string>): R {
  if (spec.size === 0) return response;
  let changed = false;
  const outputs = response.outputs.map((o) => {
    const inputName = spec.get(o.name);
    const len = inputName ? original.inputs.find((t) => t.name === inputName)?.shape[1] : undefined;
    if (len === undefined || o.shape.length < 2 || o.shape[1]! <= len) return o;
    changed = true;
    return trimTensor(o, [o.shape[0]!, len, ...o.shape.slice(2)]);
  });
  return changed ? { ...response, outputs } : response;
}

/**
 * Pads `tensor` at the end of every dim up to `shape` (same rank, each dim ≥ the tensor's) with the
 * encoded pad element. Returns the tensor itself when it already has that shape.
 */
export function padTensor(tensor: Tensor, shape: readonly number[], pad: Uint8Array): Tensor {
  const src = tensor.shape;
  if (src.length !== shape.length || src.some((d, i) => d > shape[i]!)) {
    throw new InferError('INTERNAL', `cannot pad '${tensor.name}' of shape [${src.join(',')}] to [${shape.join(',')}]`);
  }
  if (src.every((d, i) => d === shape[i])) return tensor;
  const rank = src.length;
  const total = elementCount(shape);
  // Maps every source element's flat index to its flat index in the padded tensor.
  const mapIndex = (flat: number): number => {
    let dst = 0;
    let stride = 1;
    for (let d = rank - 1; d >= 0; d--) {
      const idx = flat % src[d]!;
      flat = Math.floor(flat / src[d]!);
      dst += idx * stride;
      stride *= shape[d]!;
    }
    return dst;
  };
  if (tensor.datatype === 'BYTES') {
    // Where each padded slot takes its element from: a source index, or -1 for the pad element.
    const at = bytesElementOffsets(tensor.data, tensor.name);
    const source = new Int32Array(total).fill(-1);
    for (let i = 0; i < at.length - 1; i++) source[mapIndex(i)] = i;
    const out = new BytesWriter(tensor.data.byteLength + (total - (at.length - 1)) * pad.byteLength);
    for (let j = 0; j < total; j++) {
      const i = source[j]!;
      if (i < 0) out.addRaw(pad, 0, pad.byteLength);
      else out.addRaw(tensor.data, at[i]!, at[i + 1]!);
    }
    return { name: tensor.name, datatype: 'BYTES', shape: [...shape], data: out.finish() };
  }
  const size = pad.byteLength;
  const data = new Uint8Array(new ArrayBuffer(total * size));
  if (pad.some((b) => b !== 0)) for (let i = 0; i < total; i++) data.set(pad, i * size);
  // Copy contiguous runs of the last dim at a time.
  const last = src[rank - 1] ?? 1;
  const runBytes = last * size;
  const runs = last === 0 ? 0 : elementCount(src) / last;
  for (let r = 0; r < runs; r++) {
    const dst = mapIndex(r * last) * size;
    data.set(tensor.data.subarray(r * runBytes, (r + 1) * runBytes), dst);
  }
  return { name: tensor.name, datatype: tensor.datatype, shape: [...shape], data };
}

/**
 * Pads each paddable input of the batch to the longest dims (after dim 0) found among the
 * requests. Requests with nothing to pad are returned as they are; others are shallow copies with
 * padded tensors. Inputs must agree in rank (INVALID_ARG otherwise).
 */
export function padBatch(batch: readonly InferRequest[], spec: ReadonlyMap<string, Uint8Array>): InferRequest[] {
  if (spec.size === 0 || batch.length < 2) return [...batch];
  const target = new Map<string, number[]>();
  for (const request of batch) {
    for (const t of request.inputs) {
      if (!spec.has(t.name)) continue;
      const cur = target.get(t.name);
      if (!cur) target.set(t.name, [...t.shape]);
      else if (cur.length !== t.shape.length) {
        throw new InferError('INVALID_ARG', `input '${t.name}' rank ${t.shape.length} differs from ${cur.length} of other requests in the batch for '${request.model}'`);
      } else for (let d = 1; d < cur.length; d++) cur[d] = Math.max(cur[d]!, t.shape[d]!);
    }
  }
  return batch.map((request) => {
    let changed = false;
    const inputs = request.inputs.map((t) => {
      const want = target.get(t.name);
      if (!want) return t;
      const shape = [t.shape[0]!, ...want.slice(1)];
      const padded = padTensor(t, shape, spec.get(t.name)!);
      if (padded !== t) changed = true;
      return padded;
    });
    return changed ? { ...request, inputs } : request;
  });
}
