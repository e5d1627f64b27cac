import type { ModelConfig, ModelInput, ModelOutput } from '@tritium/core';
import type { ConfigDataType } from '@tritium/core/tensor';
import { emptyDynamicBatching } from '@tritium/core/config';
import { TritonError } from './errors.ts';

/** An `add_input` / `add_output` entry: Triton's dict keys. */
export interface AutoCompleteTensor {
  readonly name: string;
  /** e.g. `TYPE_FP32`, `TYPE_STRING`. */
  readonly data_type: ConfigDataType;
  readonly dims: readonly number[];
  readonly optional?: boolean;
}

/**
 * `pb_utils.ModelConfig` as `static autoCompleteConfig(config)` receives it: fills what
 * `config.pbtxt` left out. Entries the file already declares are kept as written (Triton's rule:
 * auto-complete never overrides), a conflicting one is an INVALID_ARG naming the field.
 */
export class AutoCompleteConfig {
  readonly #config: ModelConfig;

  constructor(config: ModelConfig) {
    this.#config = structuredClone(config);
  }

  /** The config as Triton's JSON form (`as_dict()`). */
  asDict(): ModelConfig {
    return this.#config;
  }

  setMaxBatchSize(maxBatchSize: number): this {
    if (!Number.isInteger(maxBatchSize) || maxBatchSize < 0) {
      throw new TritonError(`set_max_batch_size: expected a non-negative integer, got ${maxBatchSize}`, TritonError.INVALID_ARG);
    }
    const current = this.#config.max_batch_size;
    if (current !== 0 && current !== maxBatchSize) {
      throw new TritonError(
        `configuration specified max_batch_size ${current}, but auto-complete-config function for model '${this.#config.name}' tries to set max_batch_size to ${maxBatchSize}`,
        TritonError.INVALID_ARG,
      );
    }
    this.#config.max_batch_size = maxBatchSize;
    return this;
  }

  setDynamicBatching(): this {
    const c = this.#config;
    const other = c.sequence_batching ? 'sequence_batching' : c.ensemble_scheduling ? 'ensemble_scheduling' : undefined;
    if (other) {
      throw new TritonError(
        `Configuration specified scheduling_choice as '${other}', but auto-complete-config function for model '${c.name}' tries to set scheduling_choice as 'dynamic_batching'`,
        TritonError.INVALID_ARG,
      );
    }
    c.dynamic_batching ??= emptyDynamicBatching();
    return this;
  }

  addInput(input: AutoCompleteTensor): this {
    this.#add('input', input);
    return this;
  }

  addOutput(output: AutoCompleteTensor): this {
    this.#add('output', output);
    return this;
  }

  setModelTransactionPolicy(policy: { decoupled: boolean }): this {
    const current = this.#config.model_transaction_policy;
    if (current && current.decoupled !== policy.decoupled) {
      throw new TritonError(
        `trying to change decoupled property in auto-complete-config for model '${this.#config.name}', which is already set to '${current.decoupled ? 'True' : 'False'}'`,
        TritonError.INVALID_ARG,
      );
    }
    this.#config.model_transaction_policy = { decoupled: policy.decoupled === true };
    return this;
  }

  #add(kind: 'input' | 'output', t: AutoCompleteTensor): void {
    if (!t || typeof t.name !== 'string' || !t.name) {
      throw new TritonError(`add_${kind}: '${kind}' must have a 'name'`, TritonError.INVALID_ARG);
    }
    const list = this.#config[kind] as Array<ModelInput | ModelOutput>;
    const existing = list.find((e) => e.name === t.name);
    if (existing) {
      if (t.data_type && existing.data_type !== t.data_type) {
        throw new TritonError(
          `unable to load model '${this.#config.name}', configuration expects datatype ${existing.data_type} for ${kind} '${t.name}', auto-complete-config sets ${t.data_type}`,
          TritonError.INVALID_ARG,
        );
      }
      if (t.dims && existing.dims.length > 0 && existing.dims.join(',') !== t.dims.join(',')) {
        throw new TritonError(
          `unable to load model '${this.#config.name}', configuration expects dims [${existing.dims.join(',')}] for ${kind} '${t.name}', auto-complete-config sets [${t.dims.join(',')}]`,
          TritonError.INVALID_ARG,
        );
      }
      return;
    }
    if (kind === 'input') {
      this.#config.input.push({
        name: t.name,
        data_type: t.data_type,
        format: 'FORMAT_NONE',
        dims: [...t.dims],
        is_shape_tensor: false,
        allow_ragged_batch: false,
        optional: t.optional === true,
        is_non_linear_format_io: false,
      });
    } else {
      this.#config.output.push({
        name: t.name,
        data_type: t.data_type,
        dims: [...t.dims],
        label_filename: '',
        is_shape_tensor: false,
        is_non_linear_format_io: false,
      });
    }
  }
}
