/**
 * Config fields Tritium accepts (they parse, validate and print as in Triton) but does not act on
 * yet. A model loaded with one logs a warning naming the field, so nobody believes a cache or a rate
 * limit is in force. One entry per field: delete it when the feature lands.
 */
import type { ModelConfig } from './model-config.ts';

interface InertField {
  /** The config paths of `config` where this field is set. */
  readonly setIn: (config: ModelConfig) => string[];
  /** What happens instead, for the warning. */
  readonly instead: string;
}

const INERT_FIELDS: readonly InertField[] = [
  {
    setIn: (c) => (c.response_cache?.enable ? ['response_cache'] : []),
    instead: 'there is no response cache yet, every request runs the model',
  },
  {
    setIn: (c) => c.instance_group.flatMap((g, i) => (g.rate_limiter ? [`instance_group[${i}].rate_limiter`] : [])),
    instead: 'there is no rate limiter yet, each instance runs whenever it is free',
  },
];

/** One warning per inert field set in `config`, naming the model and the field. */
export function inertFieldWarnings(config: ModelConfig): string[] {
  return INERT_FIELDS.flatMap((f) =>
    f.setIn(config).map((path) => `model '${config.name}': '${path}' is accepted but has no effect: ${f.instead}`),
  );
}
