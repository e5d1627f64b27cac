/**
 * Triton's optional latency metrics (`--metrics-config`): per model, summaries of the request,
 * queue and compute durations over a sliding window (`summary_latencies`, `summary_quantiles`,
 * `summary_max_age`; prometheus-cpp's defaults: 60 s in 5 age buckets) and the request-to-first-
 * response histogram (`histogram_latencies`; buckets from the model's `model_metrics`, Triton's
 * default 100, 500, 2000, 5000 ms). Pure aggregation on the main thread, rendered by the server.
 */

export interface LatencyMetricsOptions {
  readonly summaries?: {
    /** Quantiles to report (Triton's default 0.5, 0.9, 0.95, 0.99, 0.999). */
    readonly quantiles: readonly number[];
    /** Window the quantiles cover (Triton/prometheus-cpp: 60 s). */
    readonly maxAgeMs: number;
    /** The window rotates in this many steps (prometheus-cpp: 5). */
    readonly ageBuckets?: number;
  };
  /** Keep `nv_inference_first_response_histogram_ms`. */
  readonly firstResponseHistogram?: boolean;
}

export const DEFAULT_SUMMARY_QUANTILES: readonly number[] = [0.5, 0.9, 0.95, 0.99, 0.999];
export const DEFAULT_FIRST_RESPONSE_BUCKETS: readonly number[] = [100, 500, 2000, 5000];

/** Values kept per age bucket at most (a uniform sample beyond it), so a summary's memory is bounded. */
const MAX_SAMPLES_PER_BUCKET = 4096;

export interface SummarySnapshot {
  readonly quantiles: readonly (readonly [number, number])[];
  readonly count: number;
  readonly sum: number;
}

/** A Prometheus summary: cumulative count and sum, quantiles over the last `maxAgeMs`. */
export class SlidingSummary {
  private readonly buckets: { start: number; values: number[]; seen: number }[] = [];
  private count = 0;
  private sum = 0;
  private readonly stepMs: number;

  constructor(
    private readonly quantiles: readonly number[],
    maxAgeMs: number,
    private readonly ageBuckets = 5,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.stepMs = Math.max(1, maxAgeMs / Math.max(1, ageBuckets));
  }

  observe(value: number): void {
    this.count++;
    this.sum += value;
    const t = this.now();
    let current = this.buckets[this.buckets.length - 1];
    if (!current || t - current.start >= this.stepMs) {
      current = { start: t, values: [], seen: 0 };
      this.buckets.push(current);
      while (this.buckets.length > this.ageBuckets) this.buckets.shift();
    }
    current.seen++;
    if (current.values.length < MAX_SAMPLES_PER_BUCKET) current.values.push(value);
    else {
      const j = Math.floor(Math.random() * current.seen);
      if (j < MAX_SAMPLES_PER_BUCKET) current.values[j] = value;
    }
  }

  snapshot(): SummarySnapshot {
    const t = this.now();
    const live = this.buckets.filter((b) => t - b.start < this.stepMs * this.ageBuckets);
    const values = live.flatMap((b) => b.values).sort((a, b) => a - b);
    const quantiles = this.quantiles.map((q): readonly [number, number] => {
      if (values.length === 0) return [q, Number.NaN];
      const rank = Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1));
      return [q, values[rank]!];
    });
    return { quantiles, count: this.count, sum: this.sum };
  }
}

export interface HistogramSnapshot {
  /** Cumulative counts per upper bound; the +Inf bucket is `count`. */
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  readonly count: number;
  readonly sum: number;
}

export class Histogram {
  private readonly counts: number[];
  private count = 0;
  private sum = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.count++;
    this.sum += value;
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) this.counts[i]!++;
  }

  snapshot(): HistogramSnapshot {
    return { buckets: this.bounds.map((le, i) => ({ le, count: this.counts[i]! })), count: this.count, sum: this.sum };
  }
}
