/**
 * Dependencies between ensembles and their composing models: cycle detection with Triton's
 * message, and the order in which models must load (composing models before their ensembles).
 */
import { InferError } from '../../errors.ts';
import type { ModelConfig } from '../../config/model-config.ts';

/** Names of the models an ensemble's steps call (empty for a non-ensemble). */
export function composingModels(config: Pick<ModelConfig, 'ensemble_scheduling'>): string[] {
  return [...new Set((config.ensemble_scheduling?.step ?? []).map((s) => s.model_name).filter(Boolean))];
}

/**
 * Triton's CircularDependencyCheck for one ensemble: follows composing ensembles depth-first and,
 * when the walk returns to `start`, reports `start -> ... -> last -> start`.
 */
export function findCircularDependency(start: string, configOf: (name: string) => ModelConfig | undefined): InferError | undefined {
  const seen = new Set<string>();
  const visit = (name: string): string | undefined => {
    const config = configOf(name);
    if (!config) return undefined;
    for (const dep of composingModels(config)) {
      if (dep === start) return name;
      if (seen.has(dep)) continue;
      seen.add(dep);
      const hit = visit(dep);
      if (hit) return hit;
    }
    return undefined;
  };
  const last = visit(start);
  if (last === undefined) return undefined;
  return new InferError('INVALID_ARG', `circular dependency between ensembles: ${start} -> ... -> ${last} -> ${start}`);
}
