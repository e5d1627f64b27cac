/**
 * Measures one candidate: loads its configs through the load API's config override (composing
 * models first, then the ensemble), runs the perf engine over the concurrency levels (perf's
 * stability windows), and scores it against the SLO: the highest throughput of a level whose latency
 * percentile stays within the budget. CPU per inference comes from the server process when tune
 * started it.
 */
import { readFileSync } from 'node:fs';
import { DEFAULTS, type PerfOptions } from '../options.ts';
import { runPerf } from '../run.ts';
import type { PerfClient } from '../perf-client.ts';
import type { LevelResult } from '../profiler.ts';
import { applyCandidate, type Candidate, type JsonConfig, type ModelPlan } from './search-space.ts';
import type { TuneOptions } from './tune-options.ts';

/** Loads a model with a config override (Triton's load API `config` parameter). */
export type LoadWithConfig = (model: string, configJson: string) => Promise<void>;

export interface LevelFigures {
  readonly concurrency: number;
  readonly throughput: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The budget's percentile (p50/p90/p95/p99), in ms. */
  readonly budgetMs: number;
  readonly stable: boolean;
  /** Inferences per execution of each step (or the model), from the server's statistics. */
  readonly batchSizes: Readonly<Record<string, number>>;
}

export interface Measured {
  readonly candidate: Candidate;
  readonly configs: Readonly<Record<string, JsonConfig>>;
  readonly levels: readonly LevelFigures[];
  /** The best level within the SLO, or undefined when none is. */
  readonly best: LevelFigures | undefined;
  /** Server CPU-seconds per inference over the measurement (undefined when tune did not start the server). */
  readonly cpuPerInferenceMs: number | undefined;
  readonly error?: string;
}

/** CPU seconds (user + system) a process used so far, from /proc (Linux); undefined elsewhere. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime (fields 14-17 of stat; 12-15 after the command name), in clock ticks.
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return ticks / 100;
  } catch {
    return undefined;
  }
}

const percentileMs = (l: LevelResult, p: TuneOptions['latencyBudget']['percentile']): number =>
  (p === 50 ? l.latency.p50Us : p === 90 ? l.latency.p90Us : p === 95 ? l.latency.p95Us : l.latency.p99Us) / 1000;

/** perf's options for one level of `tune` (perf's ranges are arithmetic; tune's levels double, so each runs alone). */
export function perfOptionsFor(tune: TuneOptions, url: string, concurrency: number): PerfOptions {
  return {
    ...DEFAULTS,
    model: tune.model,
    modelVersion: '',
    url,
    protocol: tune.protocol,
    inputData: tune.inputData,
    shapes: new Map(),
    concurrencyRange: { start: concurrency, end: concurrency, step: 1 },
    measurementIntervalMs: tune.measurementIntervalMs,
    maxTrials: 5,
    warmupRequestCount: 0,
    verbose: false,
  };
}

export async function measureCandidate(args: {
  readonly tune: TuneOptions;
  readonly plan: ModelPlan;
  readonly candidate: Candidate;
  readonly client: PerfClient;
  readonly url: string;
  readonly load: LoadWithConfig;
  readonly serverPid?: number;
}): Promise<Measured> {
  const { tune, plan, candidate, client } = args;
  const configs = applyCandidate(plan, candidate);
  try {
    for (const model of [...plan.steps.filter((s, i, all) => all.indexOf(s) === i), plan.target]) {
      await args.load(model, JSON.stringify(configs[model]));
    }
  } catch (error) {
    return { candidate, configs, levels: [], best: undefined, cpuPerInferenceMs: undefined, error: (error as Error).message };
  }
  // Every inference sent while measuring counts toward CPU per inference (not only the stable windows').
  let inferences = 0;
  const counting: PerfClient = { ...client, infer: (m, v, inputs) => client.infer(m, v, inputs).then(() => void inferences++), close: () => {} };
  const cpu0 = processCpuSeconds(args.serverPid);
  const levels: LevelFigures[] = [];
  for (const c of tune.concurrency) {
    const [result] = await runPerf(perfOptionsFor(tune, args.url, c), { client: counting });
    if (!result) continue;
    const server = result.server;
    const batchOf = (b: { inferenceCount: number; executionCount: number } | undefined) => (b && b.executionCount > 0 ? b.inferenceCount / b.executionCount : 0);
    const batchSizes: Record<string, number> = {};
    if (server) {
      if (plan.steps.length === 0) batchSizes[plan.target] = batchOf(server);
      for (const step of server.composing) batchSizes[step.model] = batchOf(step.breakdown);
    }
    levels.push({
      concurrency: c,
      throughput: result.throughput,
      p50Ms: result.latency.p50Us / 1000,
      p99Ms: result.latency.p99Us / 1000,
      budgetMs: percentileMs(result, tune.latencyBudget.percentile),
      stable: result.stable,
      batchSizes,
    });
    // Past the budget, more concurrency only queues more: the rest of the levels cannot qualify.
    if (percentileMs(result, tune.latencyBudget.percentile) > tune.latencyBudget.ms * 1.5) break;
  }
  const cpu1 = processCpuSeconds(args.serverPid);
  const within = levels.filter((l) => l.budgetMs <= tune.latencyBudget.ms && l.throughput >= tune.minThroughput);
  const best = within.reduce<LevelFigures | undefined>((b, l) => (!b || l.throughput > b.throughput ? l : b), undefined);
  return {
    candidate,
    configs,
    levels,
    best,
    cpuPerInferenceMs: cpu0 !== undefined && cpu1 !== undefined && inferences > 0 ? ((cpu1 - cpu0) * 1000) / inferences : undefined,
  };
}

/** Orders measured candidates: meeting the SLO first, then throughput, then lower latency. */
export function better(a: Measured, b: Measured | undefined): boolean {
  if (!b) return true;
  if (!!a.best !== !!b.best) return !!a.best;
  if (a.best && b.best) return a.best.throughput > b.best.throughput * 1.02 || (a.best.throughput >= b.best.throughput * 0.98 && a.best.budgetMs < b.best.budgetMs);
  // Neither meets the SLO: the closest (lowest latency at the lowest level) is better.
  const la = a.levels[0]?.budgetMs ?? Infinity;
  const lb = b.levels[0]?.budgetMs ?? Infinity;
  return la < lb;
}
