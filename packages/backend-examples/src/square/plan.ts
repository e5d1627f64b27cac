/**
 * Triton's square backend, model side (square_backend `ModelState::ValidateModelConfig` and
 * `ModelParameters`): one INT32 input IN [1] and one INT32 output OUT [1]; optional CUSTOM_* delay,
 * failure and empty-response parameters (a value that is not a plain number is ignored, as Triton
 * ignores it, with a log line).
 */
import { shapeToString, type LoadSpec } from '@tritium/core/backend';
import { invalidArg, parameter } from '../config-read.ts';
import type { ExampleModelPlan } from '../example-backend.ts';

export interface SquareParameters {
  readonly inferDelayNs: number;
  readonly outputDelayNs: number;
  readonly cancelDelayNs: number;
  readonly failCount: number;
  readonly emptyCount: number;
}

export interface SquareInit {
  readonly model: string;
  readonly version: number;
  readonly params: SquareParameters;
}

const KEYS: Record<keyof SquareParameters, string> = {
  inferDelayNs: 'CUSTOM_INFER_DELAY_NS',
  outputDelayNs: 'CUSTOM_OUTPUT_DELAY_NS',
  cancelDelayNs: 'CUSTOM_CANCEL_DELAY_NS',
  failCount: 'CUSTOM_FAIL_COUNT',
  emptyCount: 'CUSTOM_EMPTY_COUNT',
};

export function planSquare(spec: Pick<LoadSpec, 'config' | 'version' | 'log'>): ExampleModelPlan<SquareInit> {
  const { config } = spec;
  if (config.input.length !== 1) throw invalidArg(`expected 1 input, got ${config.input.length}`);
  if (config.output.length !== 1) throw invalidArg(`expected 1 output, got ${config.output.length}`);
  const input = config.input[0]!;
  const output = config.output[0]!;
  if (input.name !== 'IN') throw invalidArg(`expected first input tensor name to be IN, got ${input.name}`);
  if (output.name !== 'OUT') throw invalidArg(`expected first output tensor name to be OUT, got ${output.name}`);
  if (input.dims.length !== 1 || input.dims[0] !== 1) throw invalidArg(`expected IN shape to be [1], got ${shapeToString(input.dims)}`);
  if (output.dims.length !== 1 || output.dims[0] !== 1) throw invalidArg(`expected OUT shape to be [1], got ${shapeToString(output.dims)}`);
  if (input.data_type !== 'TYPE_INT32') throw invalidArg(`expected IN datatype to be INT32, got ${input.data_type}`);
  if (output.data_type !== 'TYPE_INT32') throw invalidArg(`expected OUT datatype to be INT32, got ${output.data_type}`);
  const params = {} as Record<keyof SquareParameters, number>;
  for (const [field, key] of Object.entries(KEYS) as [keyof SquareParameters, string][]) {
    const raw = parameter(config, key);
    params[field] = 0;
    if (raw === undefined) continue;
    // Triton's IsNumber: digits only (so no sign); stoi bounds it to int32.
    if (!/^\d+$/.test(raw) || Number(raw) > 2 ** 31 - 1) {
      spec.log.info(`${raw} string_value from ${key} parameter is not a number`);
      continue;
    }
    params[field] = Number(raw);
  }
  return { init: { model: config.name, version: spec.version, params } };
}
