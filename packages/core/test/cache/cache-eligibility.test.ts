/** Which models may answer from the response cache: Triton's rules, ensembles through their composing models. */
import { describe, expect, it } from 'vitest';
import { cacheIneligibility } from '../../src/cache/cache-eligibility.ts';
import type { ModelConfig } from '../../src/config/model-config.ts';

const model = (name: string, extra: Partial<ModelConfig> = {}): ModelConfig => ({ name, instance_group: [], ...extra }) as unknown as ModelConfig;
const ensemble = (name: string, steps: string[]): ModelConfig =>
  model(name, {
    ensemble_scheduling: { max_inflight_requests: 0, step: steps.map((s) => ({ model_name: s, model_version: -1, input_map: {}, output_map: {}, model_namespace: '' })) },
  });

describe('cacheIneligibility', () => {
  const configs: Record<string, ModelConfig> = {
    plain: model('plain'),
    stream: model('stream', { model_transaction_policy: { decoupled: true } }),
    stateful: model('stateful', { sequence_batching: {} as ModelConfig['sequence_batching'] }),
    inner_ok: ensemble('inner_ok', ['plain']),
    inner_bad: ensemble('inner_bad', ['plain', 'stateful']),
  };
  const lookup = (name: string) => configs[name];

  it('allows a plain model and an ensemble of cacheable models, nested ones included', () => {
    expect(cacheIneligibility(configs['plain']!, lookup)).toBeUndefined();
    expect(cacheIneligibility(ensemble('e', ['plain', 'inner_ok']), lookup)).toBeUndefined();
  });

  it('refuses decoupled and sequence models, and ensembles over any of them, saying which', () => {
    expect(cacheIneligibility(configs['stream']!, lookup)).toBe("model 'stream' is decoupled");
    expect(cacheIneligibility(ensemble('e', ['plain', 'stream']), lookup)).toBe("composing model 'stream' is decoupled");
    expect(cacheIneligibility(ensemble('e', ['inner_bad']), lookup)).toBe("composing composing model 'stateful' uses sequence batching");
    expect(cacheIneligibility(ensemble('e', ['missing']), lookup)).toBe("composing model 'missing' is not loaded");
  });
});
