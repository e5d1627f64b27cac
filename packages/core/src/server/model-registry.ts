/**
 * The records of every model the server knows, by key and by name, and what is read from them: the
 * record a name means (with namespacing, Triton's FindModelIdentifier), an ensemble's steps as
 * loaded now, and the composing models an unload leaves unused. Changing records is the lifecycle's
 * (model-lifecycle.ts); inference reads them through `resolve`.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig } from '../config/model-config.ts';
import { ambiguousModelMessage, modelIdText, modelKey } from '../repository/model-identifier.ts';
import { checkComposingModels, composingModels, type ComposingModelView } from '../ensemble/validate/ensemble-dependencies.ts';
import { validateEnsembleModels } from '../ensemble/validate/ensemble-models.ts';
import { ModelRecord } from './model-record.ts';

export class ModelRegistry {
  /** Every model known, by `modelKey(namespace, name)` (the name alone without namespacing). */
  readonly models = new Map<string, ModelRecord>();
  /** The records of each name (Triton's global map), for `resolve`. */
  private readonly byName = new Map<string, ModelRecord[]>();

  /** `namespacing`: `--model-namespacing`, records are per repository and names resolve as in `resolve`. */
  constructor(private readonly namespacing: boolean) {}

  /**
   * The record `name` means. Without namespacing, the one of that name. With it (Triton's
   * FindModelIdentifier, and an ensemble's preferred identifier for its steps): the present record
   * in namespace `prefer` if there is one, else the only present record of that name; several
   * present and none preferred is Triton's ambiguity error (INVALID_ARG). With none present, a
   * known record (an unloaded one) still answers, so its state is reported.
   */
  resolve(name: string, prefer?: string): ModelRecord | undefined {
    if (!this.namespacing) return this.models.get(name);
    if (prefer !== undefined) {
      const own = this.models.get(modelKey(prefer, name));
      if (own?.present) return own;
    }
    const all = this.byName.get(name) ?? [];
    const present = all.filter((r) => r.present);
    if (present.length > 1) throw new InferError('INVALID_ARG', ambiguousModelMessage(name, present.length));
    if (present.length === 1) return present[0];
    return (prefer !== undefined ? this.models.get(modelKey(prefer, name)) : undefined) ?? (all.length === 1 ? all[0] : undefined);
  }

  /** `resolve`, with an ambiguous name as unknown (an ensemble step: "not available or ambiguous"). */
  tryResolve(name: string, prefer?: string): ModelRecord | undefined {
    try {
      return this.resolve(name, prefer);
    } catch {
      return undefined;
    }
  }

  /** Every record of `name`, one per namespace holding it. */
  recordsNamed(name: string): readonly ModelRecord[] {
    return this.byName.get(name) ?? [];
  }

  /** The record of `name` in `namespace`, made (with no versions) if it is not known yet. */
  recordFor(name: string, namespace = ''): ModelRecord {
    const key = modelKey(namespace, name);
    let record = this.models.get(key);
    if (!record) {
      record = new ModelRecord(name, namespace);
      this.models.set(key, record);
      this.byName.set(name, [...(this.byName.get(name) ?? []), record]);
    }
    return record;
  }

  /** Composing models of `record` (recursively) that no other loaded ensemble uses and nobody loaded by name. */
  orphanedComposing(record: ModelRecord): ModelRecord[] {
    const removed = new Set<string>([record.key]);
    const out: ModelRecord[] = [];
    let frontier = composingModels(record.resolved?.config ?? {});
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const dep of frontier) {
        const r = this.tryResolve(dep, record.namespace);
        if (!r || removed.has(r.key) || r.explicit) continue;
        const usedElsewhere = [...this.models.values()].some(
          (o) => !removed.has(o.key) && o.readyVersions().length > 0 && composingModels(o.resolved?.config ?? {}).includes(dep),
        );
        if (usedElsewhere) continue;
        removed.add(r.key);
        out.push(r);
        next.push(...composingModels(r.resolved?.config ?? {}));
      }
      frontier = next;
    }
    return out;
  }

  /** Why an ensemble cannot run against the models serving now, or undefined when it can. */
  composingProblem(config: ModelConfig, namespace: string): string | undefined {
    try {
      checkComposingModels(config, (name) => this.composingView(name, namespace), modelIdText(namespace, config.name));
      return undefined;
    } catch (err) {
      return InferError.from(err).message;
    }
  }

  /**
   * Checks an ensemble against its composing models as loaded now (Triton's CheckNode +
   * ValidateEnsembleConfig) and returns its config completed with the decoupled flag it inherits.
   */
  completeEnsemble(config: ModelConfig, namespace: string): ModelConfig {
    const ensembleId = modelIdText(namespace, config.name);
    checkComposingModels(config, (name) => this.composingView(name, namespace), ensembleId);
    const stepRecord = (m: string): ModelRecord => this.tryResolve(m, namespace)!;
    const result = validateEnsembleModels(config, (m) => stepRecord(m).latestServing()!.config, {
      ensemble: ensembleId,
      step: (m) => modelIdText(stepRecord(m).namespace, m),
    });
    // Triton always writes the inherited flag, so an ensemble's config carries
    // `model_transaction_policy` (decoupled false or true) once loaded.
    return { ...config, model_transaction_policy: { ...config.model_transaction_policy, decoupled: result.decoupled } };
  }

  private composingView(name: string, namespace: string): ComposingModelView {
    const r = this.tryResolve(name, namespace);
    if (!r || (!r.resolved && !r.error)) return { known: false, readyVersions: [] };
    return {
      known: true,
      id: modelIdText(r.namespace, r.name),
      configError: !r.resolved ? r.error : undefined,
      // A model whose instances are down for now still counts: it recovers by itself.
      readyVersions: r.servingVersions(),
      loadError: r.loadError(),
    };
  }
}
