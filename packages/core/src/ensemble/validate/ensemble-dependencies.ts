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
  const node = (name: string): DependencyNode | undefined => {
    const config = configOf(name);
    return config ? { id: name, config } : undefined;
  };
  const first = node(start);
  return first ? findCycle(first, (_, step) => node(step)) : undefined;
}

/** A model the cycle walk reaches: Triton's identifier (`namespace::name` with namespacing) and its config. */
export interface DependencyNode {
  readonly id: string;
  readonly config: ModelConfig;
}

/**
 * `findCircularDependency` over identifiers: `stepOf(from, name)` is the model a step of `from`
 * names (with namespacing, resolved from `from`'s repository), undefined when there is none.
 */
export function findCycle<N extends DependencyNode>(start: N, stepOf: (from: N, step: string) => N | undefined): InferError | undefined {
  const seen = new Set<string>();
  const visit = (from: N): string | undefined => {
    for (const name of composingModels(from.config)) {
      const dep = stepOf(from, name);
      if (!dep) continue;
      if (dep.id === start.id) return from.id;
      if (seen.has(dep.id)) continue;
      seen.add(dep.id);
      const hit = visit(dep);
      if (hit) return hit;
    }
    return undefined;
  };
  const last = visit(start);
  if (last === undefined) return undefined;
  return new InferError('INVALID_ARG', `circular dependency between ensembles: ${start.id} -> ... -> ${last} -> ${start.id}`);
}

/** What the server knows of a composing model when its ensemble loads. */
export interface ComposingModelView {
  /** Known to the repository (read, or failed while being read). */
  readonly known: boolean;
  /** Its config could not be read/validated: the message. */
  readonly configError?: string;
  /** Versions serving now, ascending. */
  readonly readyVersions: readonly number[];
  /** Why its versions failed to load, if they did. */
  readonly loadError?: string;
  /** Triton's identifier in messages (`namespace::name` with namespacing); the name when absent. */
  readonly id?: string;
}

/**
 * Triton's CheckNode for an ensemble: every step's model exists, is valid, has a loaded version,
 * and the version a step pins is loaded. Throws INVALID_ARG with Triton's messages, which name
 * the ensemble by `ensembleId` (its identifier with namespacing) and a composing model by its view's id.
 */
export function checkComposingModels(config: ModelConfig, view: (name: string) => ComposingModelView, ensembleId = config.name): void {
  const E = ensembleId;
  const missing = composingModels(config).filter((m) => !view(m).known);
  if (missing.length > 0) {
    throw new InferError('INVALID_ARG', `ensemble ${E} contains models that are not available or ambiguous: ${missing.join(', ')}`);
  }
  for (const step of config.ensemble_scheduling?.step ?? []) {
    const m = view(step.model_name);
    const M = m.id ?? step.model_name;
    if (m.configError !== undefined) {
      throw new InferError('INVALID_ARG', `ensemble '${E}' depends on '${M}' which is not valid. Model '${M}' failed with error: ${m.configError}`);
    }
    if (m.readyVersions.length === 0) {
      const why = m.loadError ? ` Model '${M}' loading failed with error: ${m.loadError}` : '';
      throw new InferError('INVALID_ARG', `ensemble '${E}' depends on '${M}' which has no loaded version.${why}`);
    }
    const required = Number(step.model_version);
    if (required !== -1 && !m.readyVersions.includes(required)) {
      throw new InferError('INVALID_ARG', `ensemble '${E}' depends on '${M}' whose required version ${required} is not loaded.`);
    }
  }
}
