/** `@tritium/core/metrics`: custom metrics (a model's own families) and the snapshots of latency summaries and histograms. */
export { CustomMetrics } from './custom-metrics.ts';
export type { MetricOp, MetricKind, CustomFamilySnapshot, CustomMetricSnapshot } from './custom-metrics.ts';
export type { LatencyMetricsOptions, SummarySnapshot, HistogramSnapshot } from './latency-metrics.ts';
export type { LatencySnapshot, LatencySummaryName, TokenStats } from '../server/model-stats.ts';
