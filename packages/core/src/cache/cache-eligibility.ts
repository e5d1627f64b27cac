/**
 * Whether a loaded model answers from the response cache, by Triton's rules: the server has a cache
 * (`--cache-config`), the model's config enables it, and the model's answers are a function of its
 * request alone: not decoupled, no sequence batching (config validation already refuses both on the
 * model itself). An ensemble is cached at the top level only when every composing model could be
 * (Triton: "if a composing model doesn't support caching, the ensemble inherits this limitation"),
 * nested ensembles included; composing models need not enable the cache themselves.
 */
import type { ModelConfig } from '../config/model-config.ts';

/** Why `config` cannot be cached, or undefined when it can. `composing` looks up a step's config. */
export function cacheIneligibility(
  config: ModelConfig,
  composing: (name: string, version?: number) => ModelConfig | undefined,
  seen: ReadonlySet<string> = new Set(),
): string | undefined {
  if (config.model_transaction_policy?.decoupled) return `model '${config.name}' is decoupled`;
  if (config.sequence_batching) return `model '${config.name}' uses sequence batching`;
  if (!config.ensemble_scheduling) return undefined;
  if (seen.has(config.name)) return undefined;
  const inner = new Set(seen).add(config.name);
  for (const step of config.ensemble_scheduling.step) {
    const v = Number(step.model_version);
    const stepConfig = composing(step.model_name, v > 0 ? v : undefined);
    if (!stepConfig) return `composing model '${step.model_name}' is not loaded`;
    const why = cacheIneligibility(stepConfig, composing, inner);
    if (why) return `composing ${why}`;
  }
  return undefined;
}
