/**
 * Config fields that take effect only when the server is started for them: `response_cache` needs
 * `--cache-config`, `rate_limiter` needs `--rate-limit execution_count` (Triton silently ignores
 * both otherwise). A model loaded with one on a server without it logs a warning naming the field and
 * the flag, so nobody believes a cache or a rate limit is in force. One entry per field.
 */
import type { ModelConfig } from './model-config.ts';

/** What the server was started with, for the fields that depend on it. */
export interface ServerFeatures {
  /** A response cache is configured (`--cache-config`). */
  readonly responseCache: boolean;
  /** Rate limiting is on (`--rate-limit execution_count`). */
  readonly rateLimit: boolean;
}

interface InertField {
  /** The config paths of `config` where this field is set and the server does not act on it. */
  readonly setIn: (config: ModelConfig, server: ServerFeatures) => string[];
  /** What happens instead, for the warning. */
  readonly instead: string;
}

const INERT_FIELDS: readonly InertField[] = [
  {
    setIn: (c, s) => (c.response_cache?.enable && !s.responseCache ? ['response_cache'] : []),
    instead: 'the server has no response cache (start it with --cache-config local,size=<bytes>), every request runs the model',
  },
  {
    setIn: (c, s) => (s.rateLimit ? [] : c.instance_group.flatMap((g, i) => (g.rate_limiter ? [`instance_group[${i}].rate_limiter`] : []))),
    instead: 'rate limiting is off (start the server with --rate-limit execution_count), each instance runs whenever it is free',
  },
];

/** One warning per field set in `config` that `server` does not act on, naming the model and the field. */
export function inertFieldWarnings(config: ModelConfig, server: ServerFeatures): string[] {
  return INERT_FIELDS.flatMap((f) =>
    f.setIn(config, server).map((path) => `model '${config.name}': '${path}' is accepted but has no effect: ${f.instead}`),
  );
}
