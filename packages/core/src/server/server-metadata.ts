import type { ModelConfig } from '../config/model-config.ts';
import { configToWireDataType } from '../tensor/data-type.ts';
import type { ModelMetadata, ServerMetadata, TensorMetadata } from './server-api.ts';

/** The Triton release whose protocol and behaviour Tritium follows (clients read it as Triton's version). */
export const TRITON_COMPATIBLE_VERSION = '2.61.0';

/** Triton's server extensions, in the order Triton's core reports them (docs/triton-compatibility.md §2). */
export const SERVER_EXTENSIONS = [
  'classification',
  'sequence',
  'model_repository',
  'model_repository(unload_dependents)',
  'schedule_policy',
  'model_configuration',
  'system_shared_memory',
  'cuda_shared_memory',
  'binary_tensor_data',
  'parameters',
  'statistics',
  'trace',
  'logging',
] as const;
export type ServerExtension = (typeof SERVER_EXTENSIONS)[number];

/**
 * Extensions of Triton's list that core cannot serve yet, with why. Server metadata advertises an
 * extension only when it works: delete its line here once it does. Transports remove what they
 * cannot serve in their turn (apps/server `protocol/extensions.ts`).
 */
export const CORE_EXTENSION_GAPS: ReadonlyMap<ServerExtension, string> = new Map<ServerExtension, string>([]);

/** Server metadata advertising Triton's extensions, in Triton's order, less those in `gaps`. */
export function serverMetadata(gaps: ReadonlyMap<string, string> = CORE_EXTENSION_GAPS): ServerMetadata {
  return { name: 'triton', version: TRITON_COMPATIBLE_VERSION, extensions: SERVER_EXTENSIONS.filter((e) => !gaps.has(e)) };
}

function tensorMetadata(batching: boolean, t: { name: string; data_type: string; dims: number[] }): TensorMetadata {
  return {
    name: t.name,
    datatype: configToWireDataType(t.data_type) ?? 'BYTES',
    shape: batching ? [-1, ...t.dims] : [...t.dims],
  };
}

/**
 * Triton's model metadata: shapes with a leading -1 when the model batches, platform = the
 * config's platform else its backend, versions = the ready versions as strings.
 */
export function modelMetadata(config: ModelConfig, versions: readonly number[]): ModelMetadata {
  const batching = config.max_batch_size > 0;
  return {
    name: config.name,
    versions: versions.map(String),
    platform: config.platform || config.backend,
    inputs: config.input.map((i) => tensorMetadata(batching, i)),
    outputs: config.output.map((o) => tensorMetadata(batching, o)),
  };
}
