/**
 * The ModelConfig that gRPC answers with. Triton's proto holds `dynamic_batching`,
 * `sequence_batching` and `ensemble_scheduling` in one oneof (`scheduling_choice`), and a protobuf
 * reader keeps only the member last on the wire: an ensemble that batches its whole pipeline
 * (`dynamic_batching` beside `ensemble_scheduling`, docs/triton-compatibility.md) would lose one of
 * them in every Triton client. So such an ensemble keeps `ensemble_scheduling` in the oneof, as
 * Triton's clients expect, and its `dynamic_batching` travels in `parameters` under
 * ENSEMBLE_BATCHING_PARAMETER, as the Triton JSON of `ModelDynamicBatching` (the same text HTTP's
 * config shows under `dynamic_batching`). HTTP's JSON has no oneof and shows both as they are.
 */
import type { ModelConfig } from '@tritium/core';
import { modelConfigToJson } from '@tritium/core/config';

/** The `parameters` key carrying an ensemble's `dynamic_batching` over gRPC (output only). */
export const ENSEMBLE_BATCHING_PARAMETER = 'tritium.dynamic_batching';

/** `config` as gRPC's ModelConfig message holds it: one member of `scheduling_choice`. */
export function grpcModelConfig(config: ModelConfig): ModelConfig {
  if (!config.ensemble_scheduling || !config.dynamic_batching) return config;
  const { dynamic_batching: _moved, ...rest } = config;
  const batching = (JSON.parse(modelConfigToJson(config)) as { dynamic_batching: unknown }).dynamic_batching;
  return { ...rest, parameters: { ...config.parameters, [ENSEMBLE_BATCHING_PARAMETER]: { string_value: JSON.stringify(batching) } } };
}
