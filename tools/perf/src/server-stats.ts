import type { ModelStatistics, StatisticDuration } from '@tritium/client';
import type { PerfClient } from './perf-client.ts';

/** Cumulative counters of one model, from Triton's statistics extension. */
export interface ModelCounters {
  readonly successCount: number;
  readonly successNs: number;
  readonly queueNs: number;
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
  readonly inferenceCount: number;
  readonly executionCount: number;
  /** Tokens of executions that padded rows (Tritium's `tritium.tokens` statistics; 0 elsewhere). */
  readonly realTokens: number;
  readonly paddedTokens: number;
  readonly tokenExecutions: number;
}

/** Per-request averages over a window, in microseconds (perf_analyzer's server columns). */
export interface ServerBreakdown {
  readonly requestCount: number;
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly avgRequestUs: number;
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
  /** Request time not in queue or compute (server overhead). */
  readonly overheadUs: number;
  /** Real / padded tokens of the window's executions that padded rows; undefined when none did. */
  readonly paddingEfficiency?: number;
  /** Padded tokens (rows × longest row) per such execution. */
  readonly paddedTokensPerExecution?: number;
  /** Composing models of an ensemble, each with its own averages. */
  readonly composing: ReadonlyArray<{ model: string; breakdown: ServerBreakdown }>;
}

const n = (v: number | undefined): number => Number(v ?? 0);
const ns = (d: StatisticDuration | undefined): number => n(d?.ns);

/** Tritium's fields beside Triton's in a `model_stats` entry (HTTP's JSON only). */
interface TritiumFields {
  readonly tritium?: { readonly tokens?: { readonly executions?: number; readonly real?: number; readonly padded?: number } };
}

/** Reads one model's counters out of a `model_stats` entry (a duration the server left out counts 0). */
export function countersOf(entry: ModelStatistics): ModelCounters {
  const stats = entry.inference_stats;
  const tokens = (entry as ModelStatistics & TritiumFields).tritium?.tokens;
  return {
    successCount: n(stats?.success?.count),
    successNs: ns(stats?.success),
    queueNs: ns(stats?.queue),
    computeInputNs: ns(stats?.compute_input),
    computeInferNs: ns(stats?.compute_infer),
    computeOutputNs: ns(stats?.compute_output),
    inferenceCount: n(entry.inference_count),
    executionCount: n(entry.execution_count),
    realTokens: n(tokens?.real),
    paddedTokens: n(tokens?.padded),
    tokenExecutions: n(tokens?.executions),
  };
}

/** Snapshot of the measured model and (for ensembles) its composing models. */
export type StatsSnapshot = ReadonlyMap<string, ModelCounters>;

/** Reads every model's counters in one call (sums versions of a model). */
export async function snapshot(client: PerfClient, models: readonly string[]): Promise<StatsSnapshot> {
  const all = (await client.statistics('', '')) ?? [];
  const out = new Map<string, ModelCounters>();
  for (const entry of all) {
    const name = entry.name;
    if (!models.includes(name)) continue;
    const c = countersOf(entry);
    const prev = out.get(name);
    out.set(name, prev ? addCounters(prev, c) : c);
  }
  return out;
}

/** `f` applied to each counter. */
function eachCounter(f: (k: keyof ModelCounters) => number): ModelCounters {
  return {
    successCount: f('successCount'),
    successNs: f('successNs'),
    queueNs: f('queueNs'),
    computeInputNs: f('computeInputNs'),
    computeInferNs: f('computeInferNs'),
    computeOutputNs: f('computeOutputNs'),
    inferenceCount: f('inferenceCount'),
    executionCount: f('executionCount'),
    realTokens: f('realTokens'),
    paddedTokens: f('paddedTokens'),
    tokenExecutions: f('tokenExecutions'),
  };
}

/** Counters added up (versions of one model, or windows of one measurement). */
export function addCounters(a: ModelCounters, b: ModelCounters): ModelCounters {
  return eachCounter((k) => a[k] + b[k]);
}

function delta(a: ModelCounters | undefined, b: ModelCounters | undefined): ModelCounters {
  const z = (x: ModelCounters | undefined, k: keyof ModelCounters) => (x ? x[k] : 0);
  return eachCounter((k) => z(b, k) - z(a, k));
}

function averages(d: ModelCounters, per: number): Omit<ServerBreakdown, 'composing'> {
  const us = (ns: number) => (per > 0 ? ns / per / 1000 : 0);
  const avgRequestUs = us(d.successNs);
  const queueUs = us(d.queueNs);
  const computeInputUs = us(d.computeInputNs);
  const computeInferUs = us(d.computeInferNs);
  const computeOutputUs = us(d.computeOutputNs);
  return {
    requestCount: d.successCount,
    inferenceCount: d.inferenceCount,
    executionCount: d.executionCount,
    avgRequestUs,
    queueUs,
    computeInputUs,
    computeInferUs,
    computeOutputUs,
    overheadUs: Math.max(0, avgRequestUs - queueUs - computeInputUs - computeInferUs - computeOutputUs),
    ...(d.paddedTokens > 0 && d.tokenExecutions > 0
      ? { paddingEfficiency: d.realTokens / d.paddedTokens, paddedTokensPerExecution: d.paddedTokens / d.tokenExecutions }
      : {}),
  };
}

/**
 * The server's share of a window. For an ensemble, as perf_analyzer does, queue and compute are
 * the composing models' (each averaged over its own requests) added up (perf_analyzer's
 * GetTotalEnsembleDurations); the ensemble's own queue is not added: a pipeline-batched ensemble's
 * wait in its batcher is already in its first step's queue, where the server charges it.
 */
export function breakdown(model: string, composing: readonly string[], before: StatsSnapshot, after: StatsSnapshot): ServerBreakdown {
  const own = delta(before.get(model), after.get(model));
  const top = averages(own, own.successCount);
  if (composing.length === 0) return { ...top, composing: [] };
  const parts = composing.map((m) => {
    const d = delta(before.get(m), after.get(m));
    return { model: m, breakdown: { ...averages(d, d.successCount), composing: [] } };
  });
  const sum = (k: 'queueUs' | 'computeInputUs' | 'computeInferUs' | 'computeOutputUs') =>
    parts.reduce((s, p) => s + p.breakdown[k], 0);
  const queueUs = sum('queueUs');
  const computeInputUs = sum('computeInputUs');
  const computeInferUs = sum('computeInferUs');
  const computeOutputUs = sum('computeOutputUs');
  return {
    ...top,
    queueUs,
    computeInputUs,
    computeInferUs,
    computeOutputUs,
    overheadUs: Math.max(0, top.avgRequestUs - queueUs - computeInputUs - computeInferUs - computeOutputUs),
    composing: parts,
  };
}
