import { summarize, type LatencySummary } from './latency.ts';
import { closedLoop, openLoop, type Completion, type Load, type Send } from './load.ts';
import type { PerfOptions } from './options.ts';
import { breakdown, snapshot, type ServerBreakdown, type StatsSnapshot } from './server-stats.ts';
import type { PerfClient } from './perf-client.ts';

/** One measurement window. */
export interface Window {
  readonly durationMs: number;
  /** Inferences per second (requests × batch size / window). */
  readonly throughput: number;
  /** Responses per second (a decoupled model may answer a request many times). */
  readonly responseThroughput: number;
  readonly latency: LatencySummary;
  /** Open loop: mean lateness of sends. */
  readonly avgLagMs: number;
  readonly server?: ServerBreakdown;
}

/** The result for one load level (the stable windows merged). */
export interface LevelResult {
  readonly mode: 'concurrency' | 'request_rate';
  readonly level: number;
  readonly batchSize: number;
  readonly stable: boolean;
  readonly windows: number;
  readonly requestCount: number;
  readonly throughput: number;
  /** A decoupled model: responses per second, perf_analyzer's "Response Throughput". */
  readonly responseThroughput?: number;
  readonly latency: LatencySummary;
  readonly avgLagMs: number;
  readonly server?: ServerBreakdown;
}

export interface ProfileHooks {
  /** A progress line (a window finished, a level started). */
  readonly progress?: (line: string) => void;
}

/** Context shared by the levels of a run. */
export interface ProfileContext {
  readonly client: PerfClient;
  readonly options: PerfOptions;
  readonly send: Send;
  /** Composing models when the measured model is an ensemble (for the server breakdown). */
  readonly composing: readonly string[];
  readonly serverStats: boolean;
  /** The model is decoupled (model_transaction_policy): its response throughput is reported too. */
  readonly decoupled?: boolean;
}

const STABILITY_WINDOW = 3;

function metric(w: Window, options: PerfOptions): number {
  return options.percentile !== undefined ? w.latency.pNUs! : w.latency.avgUs;
}

/** perf_analyzer's rule: over the last 3 windows, max/min within the stability percentage for
 * throughput and for latency (average, or pN with --percentile). */
export function isStable(windows: readonly Window[], options: PerfOptions): boolean {
  if (windows.length < STABILITY_WINDOW) return false;
  const last = windows.slice(-STABILITY_WINDOW);
  const within = (values: number[]) => {
    const min = Math.min(...values);
    const max = Math.max(...values);
    return min > 0 && max / min <= 1 + options.stabilityPercentage / 100;
  };
  return within(last.map((w) => w.throughput)) && within(last.map((w) => metric(w, options)));
}

async function measureWindow(ctx: ProfileContext, load: Load, before: StatsSnapshot | undefined): Promise<{ window: Window; after?: StatsSnapshot }> {
  const { options } = ctx;
  load.drain();
  const start = performance.now();
  const completions: Completion[] = [];
  if (options.measurementMode === 'count_windows') {
    // At least `measurementRequestCount` requests (and at least a second, to smooth bursts).
    while ((completions.length < options.measurementRequestCount || performance.now() - start < 1000) && !load.error) {
      await new Promise((r) => setTimeout(r, 10));
      completions.push(...load.drain());
    }
  } else {
    await new Promise((r) => setTimeout(r, options.measurementIntervalMs));
    completions.push(...load.drain());
  }
  const durationMs = performance.now() - start;
  if (load.error) throw load.error;
  const after = ctx.serverStats ? await snapshot(ctx.client, [options.model, ...ctx.composing]) : undefined;
  const latency = summarize(completions.map((c) => (c.endMs - c.startMs) * 1000), options.percentile);
  const window: Window = {
    durationMs,
    throughput: (completions.length * options.batchSize) / (durationMs / 1000),
    responseThroughput: completions.reduce((s, c) => s + c.responses, 0) / (durationMs / 1000),
    latency,
    avgLagMs: completions.length ? completions.reduce((s, c) => s + c.lagMs, 0) / completions.length : 0,
    ...(before && after ? { server: breakdown(options.model, ctx.composing, before, after) } : {}),
  };
  return { window, ...(after ? { after } : {}) };
}

/**
 * The server's share of the windows a level reports: one delta of the server's counters from the
 * snapshot before the first of those windows to the one after the last, so the top line and the
 * per-step (composing model) lines cover the same requests, weighted by request (averaging the
 * windows' per-request figures would weigh a quiet window like a busy one).
 * `snapshots[i]` is taken before window i; `snapshots[windows]` after the last window.
 */
export function serverOverWindows(
  model: string,
  composing: readonly string[],
  snapshots: readonly StatsSnapshot[],
  windows: number,
): ServerBreakdown | undefined {
  if (snapshots.length < windows + 1 || windows <= 0) return undefined;
  return breakdown(model, composing, snapshots[snapshots.length - 1 - windows]!, snapshots[snapshots.length - 1]!);
}

/**
 * Measures one load level: windows until the last three are stable or `maxTrials` windows ran;
 * the result merges the last three windows (as perf_analyzer averages its stable passes).
 */
export async function profileLevel(ctx: ProfileContext, mode: 'concurrency' | 'request_rate', level: number, hooks: ProfileHooks = {}): Promise<LevelResult> {
  const { options } = ctx;
  const load = mode === 'concurrency' ? closedLoop(level, ctx.send) : openLoop(level, options.requestDistribution, ctx.send);
  const windows: Window[] = [];
  const snapshots: StatsSnapshot[] = [];
  try {
    let before = ctx.serverStats ? await snapshot(ctx.client, [options.model, ...ctx.composing]) : undefined;
    if (before) snapshots.push(before);
    for (let trial = 1; trial <= options.maxTrials; trial++) {
      const { window, after } = await measureWindow(ctx, load, before);
      before = after;
      if (after) snapshots.push(after);
      windows.push(window);
      const lat = options.percentile !== undefined ? `p${options.percentile} latency: ${Math.round(window.latency.pNUs!)} usec` : `Avg latency: ${Math.round(window.latency.avgUs)} usec (std ${Math.round(window.latency.stdUs)} usec)`;
      hooks.progress?.(`  Pass [${trial}] throughput: ${window.throughput.toFixed(1)} infer/sec. ${lat}`);
      if (isStable(windows, options)) break;
    }
  } finally {
    await load.stop();
  }
  const stable = isStable(windows, options);
  const used = windows.slice(-STABILITY_WINDOW);
  const requestCount = used.reduce((s, w) => s + w.latency.count, 0);
  // Merge latency summaries by request-weighted averages (percentiles: weighted by count).
  const wavg = (f: (w: Window) => number) => (requestCount ? used.reduce((s, w) => s + f(w) * w.latency.count, 0) / requestCount : 0);
  const latency: LatencySummary = {
    count: requestCount,
    avgUs: wavg((w) => w.latency.avgUs),
    stdUs: wavg((w) => w.latency.stdUs),
    p50Us: wavg((w) => w.latency.p50Us),
    p90Us: wavg((w) => w.latency.p90Us),
    p95Us: wavg((w) => w.latency.p95Us),
    p99Us: wavg((w) => w.latency.p99Us),
    ...(options.percentile !== undefined ? { pNUs: wavg((w) => w.latency.pNUs!) } : {}),
  };
  const server = serverOverWindows(options.model, ctx.composing, snapshots, used.length);
  return {
    mode,
    level,
    batchSize: options.batchSize,
    stable,
    windows: windows.length,
    requestCount,
    throughput: used.reduce((s, w) => s + w.throughput, 0) / used.length,
    ...(ctx.decoupled ? { responseThroughput: used.reduce((s, w) => s + w.responseThroughput, 0) / used.length } : {}),
    latency,
    avgLagMs: used.reduce((s, w) => s + w.avgLagMs, 0) / used.length,
    ...(server ? { server } : {}),
  };
}
