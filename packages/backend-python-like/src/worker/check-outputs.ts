import { InferError, configToWireDataType, type ModelConfig, type Tensor as WireTensor } from '@tritium/core';

function fmt(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

/**
 * Checks one request's outputs against the config (name, datatype, dims with -1 wildcards, the
 * batch dimension when `max_batch_size > 0`) and keeps only the requested ones. Returns an
 * InferError naming model, output, expected and actual on the first mismatch.
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
  const byName = new Map<string, WireTensor>();
  for (const t of outputs) {
    const spec = config.output.find((o) => o.name === t.name);
    if (!spec) {
      return new InferError(
        'INTERNAL',
        `model '${model}': execute returned output '${t.name}', which the model config does not declare (outputs: ${config.output.map((o) => o.name).join(', ') || 'none'})`,
      );
    }
    const expectedType = configToWireDataType(spec.data_type);
    if (expectedType && t.datatype !== expectedType) {
      return new InferError(
        'INTERNAL',
        `model '${model}': output '${t.name}' has datatype ${t.datatype}, expected ${expectedType} (config ${spec.data_type})`,
      );
    }
    // A reshaped output is produced in `reshape.shape`; its dims are what clients see.
    const dims = spec.reshape ? spec.reshape.shape : spec.dims;
    const expected = rows !== undefined ? [rows, ...dims] : [...dims];
    const ok = t.shape.length === expected.length && expected.every((d, i) => d === -1 || d === t.shape[i]);
    if (!ok) {
      const how = rows !== undefined ? ` (batch ${rows}, config dims ${fmt(dims)})` : ` (config dims ${fmt(dims)})`;
      return new InferError('INTERNAL', `model '${model}': output '${t.name}' has shape ${fmt(t.shape)}, expected ${fmt(expected)}${how}`);
    }
    byName.set(t.name, spec.reshape && !spec.dims.includes(-1) ? { ...t, shape: rows !== undefined ? [rows, ...spec.dims] : [...spec.dims] } : t);
  }
  const out: WireTensor[] = [];
  for (const name of requested) {
    const t = byName.get(name);
    if (!t) return new InferError('INTERNAL', `model '${model}': execute did not return requested output '${name}'`);
    out.push(t);
  }
  return out;
}
