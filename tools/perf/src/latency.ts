/** Client-side latency summary of a window, in microseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly avgUs: number;
  readonly stdUs: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p95Us: number;
  readonly p99Us: number;
  /** The `--percentile` value when asked for. */
  readonly pNUs?: number;
}

/** Nearest-rank percentile of sorted values (perf_analyzer's definition). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(latenciesUs: readonly number[], pN?: number): LatencySummary {
  const sorted = [...latenciesUs].sort((a, b) => a - b);
  const count = sorted.length;
  const avg = count ? sorted.reduce((s, v) => s + v, 0) / count : 0;
  const variance = count ? sorted.reduce((s, v) => s + (v - avg) ** 2, 0) / count : 0;
  return {
    count,
    avgUs: avg,
    stdUs: Math.sqrt(variance),
    p50Us: percentile(sorted, 50),
    p90Us: percentile(sorted, 90),
    p95Us: percentile(sorted, 95),
    p99Us: percentile(sorted, 99),
    ...(pN !== undefined ? { pNUs: percentile(sorted, pN) } : {}),
  };
}
