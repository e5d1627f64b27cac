/**
 * `tritium tune`: finds the batching and instance configuration of a model or ensemble that meets a
 * latency budget with the most throughput. Starts its own server (explicit model control, through
 * `deps.startServer`) or uses a running one (`-u`), checks everything it can before generating any
 * load (the model exists, the budget fits one candidate, the server takes config overrides), searches
 * (search.ts), prints the table, and writes the winner's configs and the Pareto plot.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { grpc, http } from '@tritium/client';
import { createPerfClient } from '../perf-client.ts';
import { UsageError } from '../args.ts';
import { measureCandidate, type LoadWithConfig } from './measure-candidate.ts';
import { search, type SearchResult } from './search.ts';
import { describe, type JsonConfig, type ModelPlan } from './search-space.ts';
import { candidateTable, paretoSvg, writeWinner } from './tune-report.ts';
import { parseTuneArgs, TUNE_USAGE, type TuneOptions } from './tune-options.ts';

/** A server tune started for itself. */
export interface StartedServer {
  /** host:port of the protocol tune uses. */
  readonly url: string;
  readonly pid?: number;
  stop(): Promise<void>;
}

export interface TuneDeps {
  /** Starts a server on `repository` in explicit model-control mode with `model` loaded. */
  readonly startServer?: (repository: string, model: string, protocol: TuneOptions['protocol']) => Promise<StartedServer>;
  readonly stdout?: (text: string) => void;
  readonly stderr?: (text: string) => void;
  /** Whether stderr is a terminal (a progress bar redrawn in place; else one line per candidate). */
  readonly tty?: boolean;
}

export class TuneError extends Error {}

/** The least time one candidate takes: 3 stable windows per level plus its load. */
export function minimumCandidateMs(t: TuneOptions): number {
  return t.concurrency.length * 3 * t.measurementIntervalMs + 2000;
}

const fmtMs = (ms: number) => (ms >= 60_000 ? `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s` : `${Math.max(0, Math.round(ms / 1000))}s`);

interface Admin {
  config(model: string): Promise<JsonConfig>;
  load: LoadWithConfig;
  close(): void;
}

function adminClient(protocol: TuneOptions['protocol'], url: string): Admin {
  if (protocol === 'grpc') {
    const c = new grpc.InferenceServerClient(url);
    return {
      config: async (m) => (await c.getModelConfig(m)).config ?? {},
      load: (m, config) => c.loadModel(m, { config }),
      close: () => c.close(),
    };
  }
  const c = new http.InferenceServerClient(url);
  return {
    config: (m) => c.getModelConfig(m),
    load: (m, config) => c.loadModel(m, { config }),
    close: () => c.close(),
  };
}

async function planFor(admin: Admin, tune: TuneOptions): Promise<ModelPlan> {
  let target: JsonConfig;
  try {
    target = await admin.config(tune.model);
  } catch (error) {
    throw new TuneError(`unknown model '${tune.model}': the server answered: ${(error as Error).message}`);
  }
  const steps: string[] = (target.ensemble_scheduling?.step ?? []).map((s) => String(s.model_name));
  const base: Record<string, JsonConfig> = { [tune.model]: target };
  for (const s of steps) base[s] ??= await admin.config(s);
  if (steps.length === 0 && Number(target.max_batch_size ?? 0) === 0) {
    throw new TuneError(`model '${tune.model}' has max_batch_size 0: it cannot batch, there is nothing for tune to search but instance counts; give it max_batch_size > 0`);
  }
  // Tritium takes `tritium.batching: adaptive`; another server may refuse it (the search then stops
  // offering it) or ignore it (then it measures like the fixed delay and is not kept).
  return { target: tune.model, steps, base, adaptiveSupported: true };
}

/** Before any load: the server must take config overrides (a no-op reload of the model as it is). */
async function checkOverrides(admin: Admin, plan: ModelPlan, url: string): Promise<void> {
  try {
    await admin.load(plan.target, JSON.stringify(plan.base[plan.target]));
  } catch (error) {
    throw new TuneError(
      `the server at ${url} refuses config overrides (${(error as Error).message}); tune needs a server started with --model-control-mode=explicit that allows model-repository requests`,
    );
  }
}

/** `[#####.....] 6 measured, 3m12s left, best …`: the bar is the share of the time budget spent. */
function progressLine(measured: SearchResult['measured'], leftMs: number, budgetMs: number, width = 24): string {
  const last = measured.at(-1)!;
  const best = measured.reduce<number>((b, m) => Math.max(b, m.best?.throughput ?? 0), 0);
  const filled = Math.max(0, Math.min(width, Math.round(width * (1 - leftMs / budgetMs))));
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const lastText = last.error ? `load failed` : last.best ? `${last.best.throughput.toFixed(0)} infer/s` : 'misses the SLO';
  return `${bar} ${measured.length} measured, ${fmtMs(leftMs)} left, best ${best.toFixed(0)} infer/s; last: ${describe(last.candidate)} -> ${lastText}`;
}

export async function tuneMain(argv: readonly string[], deps: TuneDeps = {}): Promise<number> {
  const out = deps.stdout ?? ((s: string) => void process.stdout.write(s));
  const err = deps.stderr ?? ((s: string) => void process.stderr.write(s));
  if (argv.includes('--help') || argv.includes('-h')) {
    out(TUNE_USAGE);
    return 0;
  }
  let tune: TuneOptions;
  try {
    tune = parseTuneArgs(argv);
    if (tune.timeBudgetMs < minimumCandidateMs(tune)) {
      throw new UsageError(
        `--time-budget ${fmtMs(tune.timeBudgetMs)} is too short to measure one candidate (${tune.concurrency.length} load levels x 3 windows of ${tune.measurementIntervalMs} ms + its load: ${fmtMs(minimumCandidateMs(tune))})`,
      );
    }
    if (tune.modelRepository && !existsSync(join(tune.modelRepository, tune.model, 'config.pbtxt'))) {
      throw new UsageError(`unknown model '${tune.model}': ${join(tune.modelRepository, tune.model, 'config.pbtxt')} does not exist`);
    }
    if (tune.modelRepository && !deps.startServer) throw new UsageError('--model-repository needs a server to start (run tune through `tritium tune`)');
  } catch (error) {
    err(`tritium tune: ${(error as Error).message}\n`);
    return 2;
  }

  // Ctrl-C stops the search at the next candidate boundary, so a running server still gets its
  // models back as they were (and a server tune started is stopped) in the finally below.
  let interrupted = false;
  const onSigint = (): void => {
    interrupted = true;
    err('\ntritium tune: interrupted; restoring the models and stopping after the current candidate\n');
  };
  process.once('SIGINT', onSigint);
  const server = tune.modelRepository ? await deps.startServer!(tune.modelRepository, tune.model, tune.protocol) : undefined;
  const url = server?.url ?? tune.url!;
  const admin = adminClient(tune.protocol, url);
  const client = createPerfClient(tune.protocol, url, Math.max(...tune.concurrency));
  let plan: ModelPlan | undefined;
  try {
    plan = await planFor(admin, tune);
    await checkOverrides(admin, plan, url);
    err(`tritium tune: ${tune.model}${plan.steps.length ? ` (ensemble of ${plan.steps.join(', ')})` : ''}, p${tune.latencyBudget.percentile} <= ${tune.latencyBudget.ms} ms, concurrency ${tune.concurrency.join(',')}, budget ${fmtMs(tune.timeBudgetMs)}\n`);
    const result = await search({
      plan,
      maxInstances: tune.maxInstances,
      budgetMs: tune.timeBudgetMs,
      measure: (candidate) => {
        if (interrupted) throw new TuneError('interrupted (Ctrl-C): no configuration written');
        return measureCandidate({ tune, plan: plan!, candidate, client, url, load: admin.load, ...(server?.pid ? { serverPid: server.pid } : {}) });
      },
      progress: (measured, leftMs) => {
        const line = progressLine(measured, leftMs, tune.timeBudgetMs);
        err(deps.tty ? `\r\x1b[2K${line}` : `${line}\n`);
      },
    });
    if (deps.tty) err('\n');
    return report(result, tune, out);
  } catch (error) {
    if (error instanceof TuneError) {
      err(`tritium tune: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    // A running server gets its models back as they were; a server tune started simply stops.
    if (!server && plan) {
      for (const m of [...new Set(plan.steps), plan.target]) await admin.load(m, JSON.stringify(plan.base[m])).catch(() => undefined);
    }
    client.close();
    admin.close();
    await server?.stop();
    process.off('SIGINT', onSigint);
  }
}

function report(result: SearchResult, tune: TuneOptions, out: (s: string) => void): number {
  const table = candidateTable(result, tune);
  const p = `p${tune.latencyBudget.percentile}`;
  out(`${table.text}\n\n`);
  const w = result.winner;
  const base = result.baseline.best;
  const met = !!w.best;
  if (w.best) {
    out(`winner: #${result.measured.indexOf(w) + 1} ${describe(w.candidate)}: ${w.best.throughput.toFixed(0)} infer/s at ${p} ${w.best.budgetMs.toFixed(1)} ms (concurrency ${w.best.concurrency})`);
    out(base ? `; as written: ${base.throughput.toFixed(0)} infer/s (${(w.best.throughput / base.throughput).toFixed(2)}x)\n` : '; as written: did not meet the budget\n');
  } else {
    const closest = w.levels[0];
    out(
      `no candidate meets ${p} <= ${tune.latencyBudget.ms} ms${tune.minThroughput ? ` with >= ${tune.minThroughput} infer/s` : ''}. ` +
        `Closest: #${result.measured.indexOf(w) + 1} ${describe(w.candidate)}${closest ? `, ${p} ${closest.budgetMs.toFixed(1)} ms at concurrency ${closest.concurrency} (${closest.throughput.toFixed(0)} infer/s)` : ''}\n`,
    );
  }
  out(`searched ${result.measured.length} candidates; stopped: ${result.stopped}\n`);
  if (tune.outputRepository) {
    const files = writeWinner(result, tune, tune.outputRepository, tune.modelRepository);
    out(`wrote ${files.join(', ')}${met ? '' : ' (the closest candidate: the budget is not met)'}\n`);
  }
  if (tune.report) {
    writeFileSync(`${tune.report}.md`, `${table.markdown}\n`);
    writeFileSync(`${tune.report}.svg`, paretoSvg(result, tune));
    out(`wrote ${tune.report}.md and ${tune.report}.svg\n`);
  }
  return met ? 0 : 3;
}
