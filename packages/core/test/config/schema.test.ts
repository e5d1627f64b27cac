/**
 * The schema (runtime data) and the ModelConfig type (compile time) must name the same fields:
 * each table below is checked by the compiler against the type (`satisfies Record<keyof T, true>`)
 * and at run time against the schema.
 */
import { describe, expect, it } from 'vitest';
import { messageDescriptor } from '../../src/config/schema.ts';
import { MESSAGES } from '../../src/config/index.ts';
import type {
  BatchInput,
  EnsembleStep,
  ModelConfig,
  ModelDynamicBatching,
  ModelInput,
  ModelInstanceGroup,
  ModelOutput,
  ModelQueuePolicy,
  ModelSequenceBatching,
  ModelWarmup,
  SequenceControl,
  SequenceState,
} from '../../src/index.ts';

type Keys<T> = Record<keyof T, true>;

const TYPE_FIELDS: Record<string, Record<string, true>> = {
  'inference.ModelConfig': {
    name: true, platform: true, backend: true, runtime: true, version_policy: true, max_batch_size: true, input: true,
    output: true, batch_input: true, batch_output: true, optimization: true, dynamic_batching: true,
    sequence_batching: true, ensemble_scheduling: true, instance_group: true, default_model_filename: true,
    cc_model_filenames: true, metric_tags: true, parameters: true, model_warmup: true, model_operations: true,
    model_transaction_policy: true, model_repository_agents: true, response_cache: true, model_metrics: true,
  } satisfies Keys<ModelConfig>,
  'inference.ModelInput': {
    name: true, data_type: true, format: true, dims: true, reshape: true, is_shape_tensor: true,
    allow_ragged_batch: true, optional: true, is_non_linear_format_io: true,
  } satisfies Keys<ModelInput>,
  'inference.ModelOutput': {
    name: true, data_type: true, dims: true, reshape: true, label_filename: true, is_shape_tensor: true,
    is_non_linear_format_io: true,
  } satisfies Keys<ModelOutput>,
  'inference.BatchInput': { kind: true, target_name: true, data_type: true, source_input: true } satisfies Keys<BatchInput>,
  'inference.ModelInstanceGroup': {
    name: true, kind: true, count: true, rate_limiter: true, gpus: true, secondary_devices: true, profile: true,
    passive: true, host_policy: true,
  } satisfies Keys<ModelInstanceGroup>,
  'inference.ModelQueuePolicy': {
    timeout_action: true, default_timeout_microseconds: true, allow_timeout_override: true, max_queue_size: true,
  } satisfies Keys<ModelQueuePolicy>,
  'inference.ModelDynamicBatching': {
    preferred_batch_size: true, max_queue_delay_microseconds: true, preserve_ordering: true, priority_levels: true,
    default_priority_level: true, default_queue_policy: true, priority_queue_policy: true,
  } satisfies Keys<ModelDynamicBatching>,
  'inference.ModelSequenceBatching': {
    direct: true, oldest: true, max_sequence_idle_microseconds: true, control_input: true, state: true,
    iterative_sequence: true,
  } satisfies Keys<ModelSequenceBatching>,
  'inference.ModelSequenceBatching.Control': {
    kind: true, int32_false_true: true, fp32_false_true: true, bool_false_true: true, data_type: true,
  } satisfies Keys<SequenceControl>,
  'inference.ModelSequenceBatching.State': {
    input_name: true, output_name: true, data_type: true, dims: true, initial_state: true,
    use_same_buffer_for_input_output: true, use_growable_memory: true,
  } satisfies Keys<SequenceState>,
  'inference.ModelEnsembling.Step': {
    model_name: true, model_version: true, input_map: true, output_map: true, model_namespace: true,
  } satisfies Keys<EnsembleStep>,
  'inference.ModelWarmup': { name: true, batch_size: true, inputs: true, count: true } satisfies Keys<ModelWarmup>,
};

describe('schema', () => {
  it('names exactly the fields of the ModelConfig types', () => {
    for (const [message, fields] of Object.entries(TYPE_FIELDS)) {
      expect(messageDescriptor(message).fields.map((f) => f.name).sort(), message).toEqual(Object.keys(fields).sort());
    }
  });

  it("has unique field names and numbers per message, and resolves every referenced message", () => {
    for (const desc of MESSAGES.values()) {
      expect(new Set(desc.fields.map((f) => f.number)).size, desc.name).toBe(desc.fields.length);
      expect(new Set(desc.fields.map((f) => f.name)).size, desc.name).toBe(desc.fields.length);
      for (const f of desc.fields) {
        if (f.value.kind === 'message') expect(MESSAGES.has(f.value.messageName), `${desc.name}.${f.name}`).toBe(true);
      }
    }
  });

  it("carries model_config.proto's field numbers", () => {
    const numbers = Object.fromEntries(messageDescriptor('inference.ModelConfig').fields.map((f) => [f.name, f.number]));
    expect(numbers).toMatchObject({
      name: 1, platform: 2, version_policy: 3, max_batch_size: 4, input: 5, output: 6, instance_group: 7,
      default_model_filename: 8, cc_model_filenames: 9, metric_tags: 10, dynamic_batching: 11, optimization: 12,
      sequence_batching: 13, parameters: 14, ensemble_scheduling: 15, model_warmup: 16, backend: 17,
      model_operations: 18, model_transaction_policy: 19, batch_input: 20, batch_output: 21,
      model_repository_agents: 23, response_cache: 24, runtime: 25, model_metrics: 26,
    });
  });
});
