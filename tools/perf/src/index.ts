/**
 * @tritium/perf — a perf_analyzer-compatible load generator for Triton-protocol servers, through
 * `@tritium/client` only (so it measures Tritium and Triton alike).
 */
export { perfMain } from './main.ts';
export { runPerf, plotFor } from './run.ts';
export type { RunOptions } from './run.ts';
export { parsePerfArgs, parseRange, parseShape, USAGE, UsageError } from './args.ts';
export { DEFAULTS, loadLevels } from './options.ts';
export type { PerfOptions, Protocol, Range } from './options.ts';
export { buildRequests, inputSpecs } from './input-data.ts';
export { createPerfClient, toInferInputs } from './perf-client.ts';
export type { PerfClient, ModelMetadata, RequestInput } from './perf-client.ts';
export { profileLevel, isStable } from './profiler.ts';
export type { LevelResult, Window } from './profiler.ts';
export { summarize, percentile } from './latency.ts';
export type { LatencySummary } from './latency.ts';
export { addCounters, breakdown, countersOf, snapshot } from './server-stats.ts';
export type { ServerBreakdown, ModelCounters, StatsSnapshot } from './server-stats.ts';
export { closedLoop, openLoop } from './load.ts';
export type { Completion, Load, Send, StreamOutcome } from './load.ts';
export { toCsv, csvHeader, csvRow, cppDouble, composingCsv, composingCsvPath } from './report/csv.ts';
export { finalTable, levelBlock, settingsBlock } from './report/console.ts';
export { plotSvg, niceTicks } from './report/plot-svg.ts';
export type { PlotSpec, PlotSeries, PlotPoint } from './report/plot-svg.ts';
export { tuneMain, minimumCandidateMs, TuneError } from './tune/tune-main.ts';
export type { TuneDeps, StartedServer } from './tune/tune-main.ts';
export { parseTuneArgs, TUNE_USAGE } from './tune/tune-options.ts';
export type { TuneOptions, LatencyBudget } from './tune/tune-options.ts';
