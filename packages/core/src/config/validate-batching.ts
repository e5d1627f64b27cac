/** Dynamic and sequence batching rules of ValidateModelConfig, with Triton's messages. */
import type { ModelConfig, SequenceControlKind } from './model-config.ts';
import { fail } from './validation-error.ts';

/** GetBooleanSequenceControlProperties / GetTypedSequenceControlProperties, validation part. */
function checkSequenceControl(config: ModelConfig, kind: SequenceControlKind, typed: boolean): string | undefined {
  const batcher = config.sequence_batching!;
  const model = config.name;
  const seenTensors = new Set<string>();
  let found: { name: string; dataType: string } | undefined;
  batcher.control_input.forEach((ci, i) => {
    const path = `sequence_batching.control_input[${i}]`;
    if (ci.name === '') fail(`sequence batching control tensor must have a name for ${model}`, `${path}.name`);
    if (seenTensors.has(ci.name)) {
      fail(`sequence batching control tensor '${ci.name}' is specified for multiple control kinds for ${model}`, path);
    }
    seenTensors.add(ci.name);
    for (const c of ci.control) {
      if (c.kind !== kind) continue;
      if (found) fail(`sequence batching specifies multiple ${kind} tensors for ${model}`, path);
      found = { name: ci.name, dataType: c.data_type };
      const counts = [c.int32_false_true.length, c.fp32_false_true.length, c.bool_false_true.length];
      const given = counts.filter((x) => x !== 0).length;
      if (typed) {
        if (given > 0) {
          fail(
            `sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`,
            path,
          );
        }
        continue;
      }
      if (given === 0) {
        fail(
          `sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`,
          path,
        );
      }
      if (given > 1) {
        fail(
          `sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${model}`,
          path,
        );
      }
      const which = counts[0] ? 'int32_false_true' : counts[1] ? 'fp32_false_true' : 'bool_false_true';
      const count = counts[0] || counts[1] || counts[2];
      if (count !== 2) fail(`sequence batching control '${which}' must have exactly 2 entries for ${kind} for ${model}`, path);
    }
  });
  return found?.dataType;
}

export function validateDynamicBatching(config: ModelConfig): void {
  const db = config.dynamic_batching!;
  const model = config.name;
  for (const size of db.preferred_batch_size) {
    if (size <= 0) fail(`dynamic batching preferred size must be positive for ${model}`, 'dynamic_batching.preferred_batch_size');
    if (size > config.max_batch_size) {
      fail(`dynamic batching preferred size must be <= max batch size for ${model}`, 'dynamic_batching.preferred_batch_size');
    }
  }
  // Any number of levels up to 2^64-1, as in Triton: the queue makes a level only while it holds requests.
  const levels = BigInt(db.priority_levels);
  if (levels !== 0n) {
    const def = BigInt(db.default_priority_level);
    if (def === 0n || def > levels) {
      fail(`default priority level must be in range [1, ${levels}] for ${model}`, 'dynamic_batching.default_priority_level');
    }
    for (const key of Object.keys(db.priority_queue_policy)) {
      const level = BigInt(key);
      if (level === 0n || level > levels) {
        fail(
          `priority queue policy must have priority level in range [1, ${levels}] for ${model}`,
          'dynamic_batching.priority_queue_policy',
        );
      }
    }
  }
  if (db.preserve_ordering) {
    if (levels > 1n) {
      fail(`Only one priority level is allowed when 'preserve_ordering' is true for ${model}`, 'dynamic_batching.preserve_ordering');
    }
    const policies = [
      ...(db.default_queue_policy ? [db.default_queue_policy] : []),
      ...Object.values(db.priority_queue_policy),
    ];
    for (const policy of policies) {
      if (BigInt(policy.default_timeout_microseconds) !== 0n && policy.timeout_action === 'DELAY') {
        fail(
          `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${model}`,
          'dynamic_batching',
        );
      }
    }
  }
}

export function validateSequenceBatching(config: ModelConfig): void {
  const model = config.name;
  const seq = config.sequence_batching!;
  if (config.response_cache?.enable) {
    fail(
      `Response Cache does not currently support model ${model} with sequence batching scheduler. Please disable the response cache.`,
      'response_cache',
    );
  }
  checkSequenceControl(config, 'CONTROL_SEQUENCE_START', false);
  checkSequenceControl(config, 'CONTROL_SEQUENCE_END', false);
  checkSequenceControl(config, 'CONTROL_SEQUENCE_READY', false);
  const corrid = checkSequenceControl(config, 'CONTROL_SEQUENCE_CORRID', true);
  if (corrid !== undefined && !['TYPE_UINT64', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_INT32', 'TYPE_STRING'].includes(corrid)) {
    fail(
      `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${model}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`,
      'sequence_batching.control_input',
    );
  }
  if (seq.oldest) {
    for (const size of seq.oldest.preferred_batch_size) {
      if (size <= 0) fail(`sequence batching preferred batch size must be positive for ${model}`, 'sequence_batching.oldest');
      if (size > config.max_batch_size) {
        fail(`sequence batching preferred batch size must be <= max batch size for ${model}`, 'sequence_batching.oldest');
      }
    }
  }
  if (seq.direct) {
    const u = seq.direct.minimum_slot_utilization;
    if (u < 0 || u > 1) {
      fail(`sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${model}`, 'sequence_batching.direct');
    }
  }
}
