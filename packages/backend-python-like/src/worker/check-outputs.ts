import { InferError, type DataType, type ModelConfig, type Tensor as WireTensor } from '@tritium/core';
import { configToWireDataType } from '@tritium/core/tensor';

function fmt(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

interface OutputSpec {
  readonly configType: string;
  readonly datatype: DataType | undefined;
  /** Dims the model produces (`reshape.shape` when reshaped). */
  readonly dims: readonly number[];
  /** Dims clients see, when a reshape without wildcards changes them. */
  readonly clientDims: readonly number[] | undefined;
}

/** Per-config lookup tables, built once (execute runs this for every request). */
const compiled = new WeakMap<ModelConfig, Map<string, OutputSpec>>();

function specsOf(config: ModelConfig): Map<string, OutputSpec> {
  let specs = compiled.get(config);
  if (!specs) {
    specs = new Map();
    for (const o of config.output) {
      specs.set(o.name, {
        configType: o.data_type,
        datatype: configToWireDataType(o.data_type),
        dims: o.reshape ? o.reshape.shape : o.dims,
        clientDims: o.reshape && !o.dims.includes(-1) ? o.dims : undefined,
      });
    }
    // Implicit state outputs (sequence_batching.state): the sequence batcher takes them as the
    // sequence's next state; they need not be config outputs.
    for (const st of config.sequence_batching?.state ?? []) {
      if (specs.has(st.output_name)) continue;
      specs.set(st.output_name, { configType: st.data_type, datatype: configToWireDataType(st.data_type), dims: st.dims, clientDims: undefined });
    }
    compiled.set(config, specs);
  }
  return specs;
}

function shapeMatches(shape: readonly number[], rows: number | undefined, dims: readonly number[]): boolean {
  const offset = rows === undefined ? 0 : 1;
  if (shape.length !== dims.length + offset) return false;
  if (rows !== undefined && shape[0] !== rows) return false;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i]!;
    if (d !== -1 && d !== shape[i + offset]) return false;
  }
  return true;
}

/**
 * Checks one request's outputs against the config (name, datatype, dims with -1 wildcards, the
 * batch dimension when `max_batch_size > 0`) and keeps only the requested ones, in requested order.
 * Returns an InferError naming model, output, expected and actual on the first mismatch.
 *
 * @param rows the request's batch size (dim 0), or undefined for a model without a batch dimension.
 */
export function checkOutputs(
  config: ModelConfig,
  outputs: readonly WireTensor[],
  rows: number | undefined,
  requested: readonly string[],
): WireTensor[] | InferError {
  const model = config.name;
  const specs = specsOf(config);
  for (const t of outputs) {
    const spec = specs.get(t.name);
    if (!spec) {
      return new InferError(
        'INTERNAL',
        `model '${model}': execute returned output '${t.name}', which the model config does not declare (outputs: ${[...specs.keys()].join(', ') || 'none'})`,
      );
    }
    if (spec.datatype && t.datatype !== spec.datatype) {
      return new InferError(
        'INTERNAL',
        `model '${model}': output '${t.name}' has datatype ${t.datatype}, expected ${spec.datatype} (config ${spec.configType})`,
      );
    }
    if (!shapeMatches(t.shape, rows, spec.dims)) {
      const expected = rows !== undefined ? [rows, ...spec.dims] : spec.dims;
      const how = rows !== undefined ? ` (batch ${rows}, config dims ${fmt(spec.dims)})` : ` (config dims ${fmt(spec.dims)})`;
      return new InferError('INTERNAL', `model '${model}': output '${t.name}' has shape ${fmt(t.shape)}, expected ${fmt(expected)}${how}`);
    }
  }
  const out: WireTensor[] = [];
  for (const name of requested) {
    let t: WireTensor | undefined;
    for (const o of outputs) {
      if (o.name === name) {
        t = o;
        break;
      }
    }
    if (!t) return new InferError('INTERNAL', `model '${model}': execute did not return requested output '${name}'`);
    const clientDims = specs.get(name)!.clientDims;
    out.push(clientDims ? { ...t, shape: rows !== undefined ? [rows, ...clientDims] : [...clientDims] } : t);
  }
  return out;
}
