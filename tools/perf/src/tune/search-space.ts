/**
 * What `tritium tune` varies and how a candidate becomes configs: batching mode (pipeline batching
 * on the ensemble, or each step batching on its own), the queue delay, the preferred batch size,
 * adaptive batching, instance counts per step, and the padded-token budget of length-aware batching
 * (`tritium.batch_tokens`, searched when the config as written sets it: only the config knows which
 * tensor holds the rows' lengths). A candidate is a small record; `applyCandidate`
 * writes it into copies of the models' configs (Triton JSON, as the server returned them).
 */

import type { ModelConfigInit, ModelDynamicBatchingInit, ModelInstanceGroupInit } from '@tritium/client/proto';

/** A model config as Triton JSON: the server's completed config, or a copy to load (64-bit integers numbers or strings). */
export type JsonConfig = ModelConfigInit;

export interface Candidate {
  /** Ensembles only: 'pipeline' = the ensemble batches (Tritium's pipeline batching); 'per-step' = each step does. */
  readonly mode: 'pipeline' | 'per-step' | 'model';
  readonly delayUs: number;
  /** 0 = none given (the batcher's default, max_batch_size). */
  readonly preferred: number;
  readonly adaptive: boolean;
  /** Padded tokens per execution (`tritium.batch_tokens`); 0 = length-aware batching off. */
  readonly batchTokens: number;
  /** Instances of each step (or of the model), by model name. */
  readonly instances: Readonly<Record<string, number>>;
}

export interface ModelPlan {
  /** The tuned model (an ensemble or a plain model). */
  readonly target: string;
  /** Its composing models in step order (empty for a plain model). */
  readonly steps: readonly string[];
  /** The configs as loaded before tuning, by model name. */
  readonly base: Readonly<Record<string, JsonConfig>>;
  /** Whether the server accepts `tritium.batching: adaptive` (detected, never assumed). */
  readonly adaptiveSupported: boolean;
}

/** The queue delays tried (µs), in order; the search moves along this ladder. */
export const DELAY_LADDER = [0, 250, 500, 1000, 2000, 5000, 10000, 20000] as const;
/** Padded-token budgets tried (0 = off); the search moves along this ladder. */
export const TOKENS_LADDER = [0, 512, 1024, 2048, 4096, 8192, 16384, 32768] as const;
const BATCH_TOKENS = 'tritium.batch_tokens';
/** The parameters of length-aware batching, which go (and go away) together. */
const TOKEN_PARAMETERS = [BATCH_TOKENS, `${BATCH_TOKENS}.lengths`, `${BATCH_TOKENS}.execution_cost`];
/** Preferred batch sizes tried (0 = none), filtered to the target's max_batch_size. */
export const PREFERRED_LADDER = [0, 4, 8, 16, 32, 64, 128] as const;

const maxBatch = (c: JsonConfig): number => Number(c.max_batch_size ?? 0);
const firstCount = (c: JsonConfig): number => Math.max(1, Number(c.instance_group?.[0]?.count ?? 1));

/** The candidate the configs are now (what the search starts from). */
export function baselineCandidate(plan: ModelPlan): Candidate {
  const target = plan.base[plan.target]!;
  const ensemble = plan.steps.length > 0;
  const batcher = ensemble && !target.dynamic_batching ? plan.base[plan.steps[0]!] ?? target : target;
  const db = batcher.dynamic_batching ?? {};
  const preferred = db.preferred_batch_size ?? [];
  const instanceModels = ensemble ? plan.steps : [plan.target];
  return {
    mode: ensemble ? (target.dynamic_batching ? 'pipeline' : 'per-step') : 'model',
    delayUs: Number(db.max_queue_delay_microseconds ?? 0),
    preferred: preferred.length > 0 ? Math.max(...preferred.map(Number)) : 0,
    adaptive: batcher.parameters?.['tritium.batching']?.string_value === 'adaptive',
    batchTokens: Number(target.parameters?.[BATCH_TOKENS]?.string_value ?? 0) || 0,
    instances: Object.fromEntries(instanceModels.map((m) => [m, firstCount(plan.base[m]!)])),
  };
}

/** Whether the target's config as written sets a token budget (so tune may search it). */
const tokensSearchable = (plan: ModelPlan): boolean => plan.base[plan.target]?.parameters?.[BATCH_TOKENS] !== undefined;

/** `config` with the budget `tokens` (its lengths and cost as written), or without length-aware batching (0). */
function withTokens(config: JsonConfig, base: JsonConfig, tokens: number): JsonConfig {
  const parameters = { ...(config.parameters ?? {}) };
  for (const key of TOKEN_PARAMETERS) delete parameters[key];
  if (tokens > 0) {
    for (const key of TOKEN_PARAMETERS) {
      const written = base.parameters?.[key];
      if (written) parameters[key] = written;
    }
    parameters[BATCH_TOKENS] = { string_value: String(tokens) };
  }
  return { ...config, parameters };
}

function batching(c: Candidate, mb: number): ModelDynamicBatchingInit {
  const preferred = c.preferred > 0 && c.preferred <= mb ? [c.preferred] : [];
  return { preferred_batch_size: preferred, max_queue_delay_microseconds: String(c.delayUs) };
}

function withAdaptive(config: JsonConfig, on: boolean): JsonConfig {
  const parameters = { ...(config.parameters ?? {}) };
  if (on) parameters['tritium.batching'] = { string_value: 'adaptive' };
  else delete parameters['tritium.batching'];
  return { ...config, parameters };
}

/** The configs of `candidate`, by model name (every model the plan touches). */
export function applyCandidate(plan: ModelPlan, candidate: Candidate): Record<string, JsonConfig> {
  const out: Record<string, JsonConfig> = {};
  const setInstances = (c: JsonConfig, n: number | undefined): JsonConfig => {
    if (n === undefined || !Array.isArray(c.instance_group) || c.instance_group.length === 0) return c;
    const groups = c.instance_group.map((g: ModelInstanceGroupInit, i: number) => (i === 0 ? { ...g, count: n } : g));
    return { ...c, instance_group: groups };
  };
  if (plan.steps.length === 0) {
    let c = structuredClone(plan.base[plan.target]!);
    if (maxBatch(c) > 0) c = withAdaptive({ ...c, dynamic_batching: { ...(c.dynamic_batching ?? {}), ...batching(candidate, maxBatch(c)) } }, candidate.adaptive);
    if (tokensSearchable(plan)) c = withTokens(c, plan.base[plan.target]!, candidate.batchTokens);
    out[plan.target] = setInstances(c, candidate.instances[plan.target]);
    return out;
  }
  const ensemble = structuredClone(plan.base[plan.target]!);
  const pipeline = candidate.mode === 'pipeline';
  if (pipeline) {
    const batched = withAdaptive({ ...ensemble, dynamic_batching: { ...(ensemble.dynamic_batching ?? {}), ...batching(candidate, maxBatch(ensemble)) } }, candidate.adaptive);
    out[plan.target] = tokensSearchable(plan) ? withTokens(batched, ensemble, candidate.batchTokens) : batched;
  } else {
    // Length-aware batching regroups a pipeline batch: without one, the ensemble has none.
    const { dynamic_batching: _drop, ...rest } = ensemble;
    out[plan.target] = withTokens(withAdaptive(rest, false), ensemble, 0);
  }
  for (const step of new Set(plan.steps)) {
    let c = structuredClone(plan.base[step]!);
    if (!pipeline && maxBatch(c) > 0) {
      c = withAdaptive({ ...c, dynamic_batching: { ...(c.dynamic_batching ?? {}), ...batching(candidate, maxBatch(c)) } }, candidate.adaptive);
    }
    out[step] = setInstances(c, candidate.instances[step]);
  }
  return out;
}

/** A short label: `pipeline d=2000us pref=8 adaptive inst=tokenizer:4,bert:1`. */
export function describe(c: Candidate): string {
  const inst = Object.entries(c.instances)
    .map(([m, n]) => `${m}:${n}`)
    .join(',');
  return `${c.mode} d=${c.delayUs}us pref=${c.preferred || '-'}${c.adaptive ? ' adaptive' : ''}${c.batchTokens > 0 ? ` tokens=${c.batchTokens}` : ''} inst=${inst}`;
}

/** The neighbours of `c` along one knob (the search's moves), within the plan's limits. */
export function neighbours(plan: ModelPlan, c: Candidate, knob: Knob, maxInstances: number): Candidate[] {
  const target = plan.base[plan.target]!;
  const mb = plan.steps.length > 0 && c.mode === 'per-step' ? Math.min(...plan.steps.map((s) => maxBatch(plan.base[s]!)).filter((n) => n > 0)) : maxBatch(target);
  switch (knob) {
    case 'mode':
      return plan.steps.length > 0 ? [{ ...c, mode: c.mode === 'pipeline' ? 'per-step' : 'pipeline' }] : [];
    case 'delay': {
      const i = nearest(DELAY_LADDER, c.delayUs);
      const ladder: readonly number[] = DELAY_LADDER;
      return [ladder[i - 1], ladder[i + 1]].filter((d): d is number => d !== undefined && d !== c.delayUs).map((d) => ({ ...c, delayUs: d }));
    }
    case 'preferred': {
      const ladder: number[] = PREFERRED_LADDER.filter((p) => p <= mb);
      const i = nearest(ladder, c.preferred);
      return [ladder[i - 1], ladder[i + 1]].filter((p): p is number => p !== undefined && p !== c.preferred).map((p) => ({ ...c, preferred: p }));
    }
    case 'adaptive':
      return plan.adaptiveSupported && c.delayUs > 0 ? [{ ...c, adaptive: !c.adaptive }] : [];
    case 'tokens': {
      if (!tokensSearchable(plan) || c.mode === 'per-step') return [];
      const ladder: readonly number[] = TOKENS_LADDER;
      const i = nearest(ladder, c.batchTokens);
      return [ladder[i - 1], ladder[i + 1]].filter((t): t is number => t !== undefined && t !== c.batchTokens).map((t) => ({ ...c, batchTokens: t }));
    }
    case 'instances':
      return Object.entries(c.instances).flatMap(([m, n]) => (n < maxInstances ? [{ ...c, instances: { ...c.instances, [m]: n + 1 } }] : []));
  }
}

export type Knob = 'mode' | 'delay' | 'preferred' | 'adaptive' | 'instances' | 'tokens';
export const KNOBS: readonly Knob[] = ['mode', 'instances', 'delay', 'preferred', 'adaptive', 'tokens'];

function nearest(ladder: readonly number[], v: number): number {
  let best = 0;
  for (let i = 1; i < ladder.length; i++) if (Math.abs(ladder[i]! - v) < Math.abs(ladder[best]! - v)) best = i;
  return best;
}

/** A stable key, so a candidate is measured once. */
export const candidateKey = (c: Candidate): string => JSON.stringify([c.mode, c.delayUs, c.preferred, c.adaptive, c.batchTokens, Object.entries(c.instances).sort()]);
