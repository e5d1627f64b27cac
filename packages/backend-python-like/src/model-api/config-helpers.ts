import type { ModelConfig, ModelInput, ModelOutput } from '@tritium/core';

/** A model config as `initialize` gets it: `args.modelConfig`, or the `args.model_config` JSON string. */
export type ModelConfigLike = ModelConfig | string;

function parse(config: ModelConfigLike): ModelConfig {
  return typeof config === 'string' ? (JSON.parse(config) as ModelConfig) : config;
}

/** `pb_utils.get_input_config_by_name(model_config, name)`: the `input` entry, undefined when absent. */
export function getInputConfigByName(config: ModelConfigLike, name: string): ModelInput | undefined {
  return parse(config).input?.find((i) => i.name === name);
}

/** `pb_utils.get_output_config_by_name(model_config, name)`: the `output` entry, undefined when absent. */
export function getOutputConfigByName(config: ModelConfigLike, name: string): ModelOutput | undefined {
  return parse(config).output?.find((o) => o.name === name);
}

/** `pb_utils.using_decoupled_model_transaction_policy(model_config)`. */
export function usingDecoupledModelTransactionPolicy(config: ModelConfigLike): boolean {
  return parse(config).model_transaction_policy?.decoupled === true;
}
