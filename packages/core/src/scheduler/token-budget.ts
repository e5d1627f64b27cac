/**
 * Length-aware batching's config (beyond Triton), Tritium parameters beside `tritium.batching`:
 *
 *     parameters { key: "tritium.batch_tokens" value: { string_value: "2048" } }
 *     parameters { key: "tritium.batch_tokens.lengths" value: { string_value: "tokenized_mask" } }
 *
 * `tritium.batch_tokens` is the padded-token budget of one execution: rows × the longest row (what
 * a model padded to the longest row computes on). `tritium.batch_tokens.lengths` names where the
 * rows' lengths are read: in an ensemble, an ensemble tensor (an attention mask: a row's length is
 * the position of its last non-zero element, plus one); in a model, one of its inputs padded by
 * `tritium.pad.<INPUT>` (a request's length is its dim 1). `tritium.batch_tokens.execution_cost`
 * (default 16) is what one more execution costs, in tokens: how much padding is worth one fewer
 * execution. The name follows Text Embeddings Inference's `max_batch_tokens`, which bounds the same
 * product.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';

export const BATCH_TOKENS_PARAMETER = 'tritium.batch_tokens';
export const BATCH_TOKENS_LENGTHS_PARAMETER = 'tritium.batch_tokens.lengths';
export const BATCH_TOKENS_EXECUTION_COST_PARAMETER = 'tritium.batch_tokens.execution_cost';
/** Tokens one more execution is worth when the config does not say (one ONNX Runtime run's fixed cost plus a worker hop: packages/core README). */
export const DEFAULT_EXECUTION_COST_TOKENS = 16;
/** The largest budget accepted (rows × longest row of one execution). */
export const MAX_BATCH_TOKENS = 1 << 30;

export interface TokenBudget {
  /** Padded tokens one execution may hold. */
  readonly budget: number;
  /** Ensemble tensor (ensemble) or paddable input (model) holding the rows' lengths. */
  readonly lengths: string;
  /** Cost of one more execution, in tokens. */
  readonly executionTokens: number;
}

function refuse(config: Pick<ModelConfig, 'name'>, key: string, value: string, why: string): never {
  throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' ${why}, got '${value}'`);
}

/** The config's token budget, or undefined when `tritium.batch_tokens` is not set; refuses bad values naming them. */
export function tokenBudgetOf(config: Pick<ModelConfig, 'name' | 'parameters'>): TokenBudget | undefined {
  const param = (key: string): string | undefined => config.parameters?.[key]?.string_value;
  const raw = param(BATCH_TOKENS_PARAMETER);
  const lengths = param(BATCH_TOKENS_LENGTHS_PARAMETER);
  const cost = param(BATCH_TOKENS_EXECUTION_COST_PARAMETER);
  if (raw === undefined || raw === '') {
    for (const [key, value] of [[BATCH_TOKENS_LENGTHS_PARAMETER, lengths], [BATCH_TOKENS_EXECUTION_COST_PARAMETER, cost]] as const) {
      if (value !== undefined) refuse(config, key, value, `needs '${BATCH_TOKENS_PARAMETER}' (the padded-token budget) beside it`);
    }
    return undefined;
  }
  const budget = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(budget) || budget < 1 || budget > MAX_BATCH_TOKENS) {
    refuse(config, BATCH_TOKENS_PARAMETER, raw, `must be an integer from 1 to ${MAX_BATCH_TOKENS} (padded tokens per execution)`);
  }
  if (lengths === undefined || lengths.trim() === '') {
    refuse(config, BATCH_TOKENS_LENGTHS_PARAMETER, lengths ?? '', `must name the tensor that holds the rows' lengths when '${BATCH_TOKENS_PARAMETER}' is set`);
  }
  let executionTokens = DEFAULT_EXECUTION_COST_TOKENS;
  if (cost !== undefined) {
    executionTokens = Number(cost);
    if (cost.trim() === '' || !Number.isFinite(executionTokens) || executionTokens < 0 || executionTokens > MAX_BATCH_TOKENS) {
      refuse(config, BATCH_TOKENS_EXECUTION_COST_PARAMETER, cost, 'must be a number of tokens, 0 or more');
    }
  }
  return { budget, lengths: lengths.trim(), executionTokens };
}

/**
 * A model's (not an ensemble's) token budget: its lengths input must be padded by
 * `tritium.pad.<INPUT>` (so requests of different lengths batch at all) and be one row of tokens
 * per batch row (`dims: [ -1 ]`); the model must batch dynamically. Refuses otherwise, naming why.
 */
export function modelTokenBudget(
  config: Pick<ModelConfig, 'name' | 'parameters' | 'input'>,
  padding: ReadonlyMap<string, Uint8Array>,
  batching: boolean,
): TokenBudget | undefined {
  const budget = tokenBudgetOf(config);
  if (!budget) return undefined;
  const raw = config.parameters[BATCH_TOKENS_PARAMETER]!.string_value;
  if (!batching) refuse(config, BATCH_TOKENS_PARAMETER, raw, 'needs dynamic_batching and max_batch_size > 0 (it shapes batches)');
  const input = config.input.find((i) => i.name === budget.lengths);
  if (!input) refuse(config, BATCH_TOKENS_LENGTHS_PARAMETER, budget.lengths, 'must name an input of the model');
  if (!padding.has(input.name)) {
    refuse(config, BATCH_TOKENS_LENGTHS_PARAMETER, budget.lengths, `names an input without 'tritium.pad.${input.name}' (requests of other lengths could not batch)`);
  }
  if (input.dims.length !== 1) refuse(config, BATCH_TOKENS_LENGTHS_PARAMETER, budget.lengths, 'must name an input of one row of tokens per batch row (dims: [ -1 ])');
  return budget;
}

/**
 * The input whose dim 1 is a request's length in tokens, for token statistics: the budget's lengths
 * input, else the first padded input of one row of tokens per batch row. Undefined when none pads.
 */
export function tokenInputOf(config: Pick<ModelConfig, 'input'>, padding: ReadonlyMap<string, Uint8Array>, budget: TokenBudget | undefined): string | undefined {
  if (budget) return budget.lengths;
  return config.input.find((i) => padding.has(i.name) && i.dims.length === 1)?.name;
}
