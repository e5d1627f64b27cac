/**
 * The `gpu_sim` test double's model side: the cost model from the config's parameters and the
 * outputs it answers with. Not one of Triton's backends: it stands in for a GPU-bound model on a host
 * without a GPU (bench case (f)), so its execute *waits* (a timer, no CPU) as a GPU launch would:
 * `launch_us` per execution plus `per_row_us` per batch row (defaults 4000 and 20).
 */
import { type DataType } from '@tritium/core';
import { type LoadSpec } from '@tritium/core/backend';
import { configToWireDataType, DATA_TYPE_SIZE } from '@tritium/core/tensor';
import { backendShape, invalidArg, parameter } from '../config-read.ts';
import type { ExampleModelPlan } from '../example-backend.ts';

export interface GpuSimOutput {
  readonly name: string;
  readonly datatype: DataType;
  /** Dims per row (without the batch dim). */
  readonly shape: readonly number[];
  readonly rowBytes: number;
}

export interface GpuSimInit {
  readonly model: string;
  readonly version: number;
  readonly batching: boolean;
  readonly launchUs: number;
  readonly perRowUs: number;
  readonly outputs: readonly GpuSimOutput[];
}

export const DEFAULT_LAUNCH_US = 4000;
export const DEFAULT_PER_ROW_US = 20;
/** A configured cost past this would hold an instance for minutes per batch: refused. */
const MAX_COST_US = 60_000_000;

function microseconds(spec: Pick<LoadSpec, 'config'>, key: string, fallback: number): number {
  const raw = parameter(spec.config, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > MAX_COST_US) {
    throw invalidArg(`model '${spec.config.name}': parameter '${key}' must be a number of microseconds from 0 to ${MAX_COST_US}, got '${raw}'`);
  }
  return value;
}

/** Throws INVALID_ARG naming the parameter or output when the config cannot be simulated. */
export function planGpuSim(spec: Pick<LoadSpec, 'config' | 'version'>): ExampleModelPlan<GpuSimInit> {
  const config = spec.config;
  const outputs = config.output.map((o): GpuSimOutput => {
    const shape = backendShape(o);
    const datatype = configToWireDataType(o.data_type);
    if (shape.some((d) => d < 0)) throw invalidArg(`model '${config.name}': gpu_sim output '${o.name}' needs fixed dims, got [${shape.join(',')}]`);
    if (datatype === undefined || datatype === 'BYTES') throw invalidArg(`model '${config.name}': gpu_sim output '${o.name}' cannot be ${o.data_type}`);
    return { name: o.name, datatype, shape, rowBytes: shape.reduce((n, d) => n * d, 1) * DATA_TYPE_SIZE[datatype] };
  });
  return {
    init: {
      model: config.name,
      version: spec.version,
      batching: config.max_batch_size > 0,
      launchUs: microseconds(spec, 'launch_us', DEFAULT_LAUNCH_US),
      perRowUs: microseconds(spec, 'per_row_us', DEFAULT_PER_ROW_US),
      outputs,
    },
  };
}
