/**
 * Per model-version statistics: the StatsRecorder schedulers report into, aggregated into Triton's
 * ModelStatistics (HTTP/gRPC statistics extension) and the counters behind Triton's Prometheus
 * metrics. All durations are kept in nanoseconds.
 */
import type { FailureReason, ResponseOutcome, StatsRecorder, SuccessDurations } from '../scheduler/stats-recorder.ts';
import type { TokenCount } from '../types.ts';
import type { ModelStatistics, StatisticDuration } from './server-api.ts';
import { Histogram, SlidingSummary, type HistogramSnapshot, type LatencyMetricsOptions, type SummarySnapshot } from '../metrics/latency-metrics.ts';

/** The summaries Triton keeps with `summary_latencies` (µs), by the name part of `nv_inference_<name>_summary_us`. */
export type LatencySummaryName = 'request' | 'queue' | 'compute_input' | 'compute_infer' | 'compute_output';

/** What a model version's latency metrics show now (only those enabled). */
export interface LatencySnapshot {
  readonly summaries?: Readonly<Record<LatencySummaryName, SummarySnapshot>>;
  readonly firstResponse?: HistogramSnapshot;
}

/** Upper bounds of the padded-tokens-per-execution histogram (tritium_inference_padded_tokens): powers of 4 from 16 to 64 Ki. */
export const PADDED_TOKEN_BUCKETS: readonly number[] = [16, 64, 256, 1024, 4096, 16384, 65536];

/** Tokens of the executions that padded rows (padding-aware or length-aware batching). */
export interface TokenStats {
  readonly executions: number;
  /** The rows' own lengths, summed. */
  readonly real: number;
  /** Rows × longest row, summed: what the model computed on. */
  readonly padded: number;
  readonly paddedPerExecution: HistogramSnapshot;
}

const duration = (): StatisticDuration => ({ count: 0, ns: 0 });

function add(d: StatisticDuration, ns: number, count = 1): void {
  d.count += count;
  d.ns += Math.max(0, Math.round(ns));
}

const copy = (d: StatisticDuration): StatisticDuration => ({ count: d.count, ns: d.ns });

interface ResponseStats {
  compute_infer: StatisticDuration;
  compute_output: StatisticDuration;
  success: StatisticDuration;
  fail: StatisticDuration;
  empty_response: StatisticDuration;
  cancel: StatisticDuration;
}

const responseStats = (): ResponseStats => ({
  compute_infer: duration(),
  compute_output: duration(),
  success: duration(),
  fail: duration(),
  empty_response: duration(),
  cancel: duration(),
});

interface BatchStats {
  compute_input: StatisticDuration;
  compute_infer: StatisticDuration;
  compute_output: StatisticDuration;
}

export class ModelStats implements StatsRecorder {
  private lastInferenceMs = 0;
  protected inferenceCount = 0;
  private executionCount = 0;
  private pending = 0;
  private readonly success = duration();
  private readonly fail = duration();
  private readonly queue = duration();
  private readonly computeInput = duration();
  private readonly computeInfer = duration();
  private readonly computeOutput = duration();
  private readonly cacheHits = duration();
  private readonly cacheMisses = duration();
  private readonly batches = new Map<number, BatchStats>();
  private readonly responses = new Map<number, ResponseStats>();
  private readonly failures: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };
  /** Seconds the last load of this version took (nv_model_load_duration_secs). */
  loadDurationSecs = 0;
  /** Requests re-run alone after their batch crashed its instance (tritium_inference_crash_retry_total). */
  crashRetries = 0;
  /** Requests that crashed their instance running alone (tritium_inference_poison_request_total). */
  poisonRequests = 0;
  /** Tokens of padded or length-grouped executions; created by the first one (other models report none). */
  private tokenCounts: { real: number; histogram: Histogram } | undefined;

  private readonly summaries: Record<LatencySummaryName, SlidingSummary> | undefined;
  private readonly firstResponses: Histogram | undefined;

  constructor(
    readonly name: string,
    readonly version: string,
    private readonly now: () => number = Date.now,
    latency: LatencyMetricsOptions & { readonly firstResponseBuckets?: readonly number[] } = {},
  ) {
    const s = latency.summaries;
    if (s) {
      const make = () => new SlidingSummary(s.quantiles, s.maxAgeMs, s.ageBuckets);
      this.summaries = { request: make(), queue: make(), compute_input: make(), compute_infer: make(), compute_output: make() };
    }
    if (latency.firstResponseHistogram) this.firstResponses = new Histogram(latency.firstResponseBuckets ?? [100, 500, 2000, 5000]);
  }

  /** Triton's first-response histogram: whole milliseconds from arrival to the first response. */
  firstResponse(sinceArrivalNs: number): void {
    this.firstResponses?.observe(Math.floor(sinceArrivalNs / 1e6));
  }

  crashRetried(): void {
    this.crashRetries++;
  }

  poisonIsolated(): void {
    this.poisonRequests++;
  }

  tokens(count: TokenCount): void {
    this.tokenCounts ??= { real: 0, histogram: new Histogram(PADDED_TOKEN_BUCKETS) };
    this.tokenCounts.real += count.real;
    this.tokenCounts.histogram.observe(count.padded);
  }

  /** Tokens of this version's padded or length-grouped executions so far; undefined when it had none. */
  tokenStats(): TokenStats | undefined {
    const t = this.tokenCounts;
    if (!t) return undefined;
    const padded = t.histogram.snapshot();
    return { executions: padded.count, real: t.real, padded: padded.sum, paddedPerExecution: padded };
  }

  /** The summaries and histogram enabled by `--metrics-config`, as they stand. */
  latency(): LatencySnapshot {
    const s = this.summaries;
    return {
      ...(s
        ? {
            summaries: {
              request: s.request.snapshot(),
              queue: s.queue.snapshot(),
              compute_input: s.compute_input.snapshot(),
              compute_infer: s.compute_infer.snapshot(),
              compute_output: s.compute_output.snapshot(),
            },
          }
        : {}),
      ...(this.firstResponses ? { firstResponse: this.firstResponses.snapshot() } : {}),
    };
  }

  requestQueued(): void {
    this.pending++;
  }

  requestDequeued(queueNs: number): void {
    this.pending = Math.max(0, this.pending - 1);
    void queueNs; // counted per request in requestSucceeded, as Triton counts successful requests only
  }

  execution(batchSize: number, t: { computeInputNs: number; computeInferNs: number; computeOutputNs: number }): void {
    this.addExecution(batchSize, t);
  }

  /** One execution of `batchSize` inferences (Triton's UpdateInferBatchStatsWithDuration). */
  protected addExecution(batchSize: number, t: { computeInputNs: number; computeInferNs: number; computeOutputNs: number }): void {
    this.executionCount++;
    this.inferenceCount += batchSize;
    this.lastInferenceMs = this.now();
    let b = this.batches.get(batchSize);
    if (!b) {
      b = { compute_input: duration(), compute_infer: duration(), compute_output: duration() };
      this.batches.set(batchSize, b);
    }
    add(b.compute_input, t.computeInputNs);
    add(b.compute_infer, t.computeInferNs);
    add(b.compute_output, t.computeOutputNs);
  }

  requestSucceeded(totalNs: number, d: SuccessDurations): void {
    const s = this.summaries;
    if (s) {
      s.request.observe(totalNs / 1000);
      s.queue.observe(d.queueNs / 1000);
      s.compute_input.observe(d.computeInputNs / 1000);
      s.compute_infer.observe(d.computeInferNs / 1000);
      s.compute_output.observe(d.computeOutputNs / 1000);
    }
    add(this.success, totalNs);
    add(this.queue, d.queueNs);
    add(this.computeInput, d.computeInputNs);
    add(this.computeInfer, d.computeInferNs);
    add(this.computeOutput, d.computeOutputNs);
    this.lastInferenceMs = this.now();
  }

  requestFailed(totalNs: number, reason: FailureReason, dequeued: boolean): void {
    if (!dequeued) this.pending = Math.max(0, this.pending - 1);
    add(this.fail, totalNs);
    this.failures[reason]++;
    this.lastInferenceMs = this.now();
  }

  /** Triton's InferenceStatsAggregator::UpdateResponse{Success,Fail,Empty,Cancel}, keyed by response index. */
  response(index: number, outcome: ResponseOutcome, d: { inferNs: number; outputNs: number }): void {
    let r = this.responses.get(index);
    if (!r) {
      r = responseStats();
      this.responses.set(index, r);
    }
    switch (outcome) {
      case 'success':
        add(r.compute_infer, d.inferNs);
        add(r.compute_output, d.outputNs);
        add(r.success, d.inferNs + d.outputNs);
        break;
      case 'fail':
        add(r.compute_infer, d.inferNs);
        if (d.outputNs > 0) add(r.compute_output, d.outputNs);
        add(r.fail, d.inferNs + d.outputNs);
        break;
      case 'empty':
        add(r.compute_infer, d.inferNs);
        add(r.empty_response, d.inferNs);
        break;
      case 'cancel':
        add(r.cancel, d.inferNs);
        break;
    }
  }

  /**
   * A request answered from the response cache (Triton's UpdateSuccessCacheHit): a success of
   * `totalNs` with `queueNs` before its lookup and `lookupNs` of lookup; no inference, no execution.
   */
  cacheHit(totalNs: number, queueNs: number, lookupNs: number): void {
    this.summaries?.queue.observe(queueNs / 1000);
    add(this.success, totalNs);
    add(this.queue, queueNs);
    add(this.cacheHits, lookupNs);
    this.lastInferenceMs = this.now();
  }

  /**
   * A request that missed the cache and whose response was stored (Triton's UpdateSuccessCacheMiss):
   * its lookup and insert time join its request duration.
   */
  cacheMiss(lookupAndInsertNs: number): void {
    add(this.success, lookupAndInsertNs, 0);
    add(this.cacheMisses, lookupAndInsertNs);
  }

  /** Requests accepted and not yet executing. */
  get pendingRequests(): number {
    return this.pending;
  }

  /** Triton's ModelStatistics for this version. */
  snapshot(): ModelStatistics {
    const tokens = this.tokenStats();
    return {
      name: this.name,
      version: this.version,
      last_inference: this.lastInferenceMs,
      inference_count: this.inferenceCount,
      execution_count: this.executionCount,
      inference_stats: {
        success: copy(this.success),
        fail: copy(this.fail),
        queue: copy(this.queue),
        compute_input: copy(this.computeInput),
        compute_infer: copy(this.computeInfer),
        compute_output: copy(this.computeOutput),
        cache_hit: copy(this.cacheHits),
        cache_miss: copy(this.cacheMisses),
      },
      batch_stats: [...this.batches.entries()]
        .sort(([a], [b]) => a - b)
        .map(([batch_size, b]) => ({
          batch_size,
          compute_input: copy(b.compute_input),
          compute_infer: copy(b.compute_infer),
          compute_output: copy(b.compute_output),
        })),
      memory_usage: [],
      response_stats: Object.fromEntries(
        [...this.responses.entries()]
          .sort(([a], [b]) => a - b)
          .map(([index, r]) => [
            String(index),
            {
              compute_infer: copy(r.compute_infer),
              compute_output: copy(r.compute_output),
              success: copy(r.success),
              fail: copy(r.fail),
              empty_response: copy(r.empty_response),
              cancel: copy(r.cancel),
            },
          ]),
      ),
      ...(tokens
        ? {
            tritium: {
              tokens: {
                executions: tokens.executions,
                real: tokens.real,
                padded: tokens.padded,
                padding_efficiency: tokens.padded > 0 ? tokens.real / tokens.padded : 1,
              },
            },
          }
        : {}),
    };
  }

  /** Failure counts by Triton's metric reason label. */
  failureCounts(): Readonly<Record<FailureReason, number>> {
    return { ...this.failures };
  }
}

/**
 * An ensemble's statistics as Triton reports them (ensemble_scheduler.cc RequestTracker): per
 * successful request its end-to-end time, its queue (a per-step ensemble routes at once: 0; a
 * pipeline ensemble: the wait in its batcher, which the first step's queue also carries), the SUM
 * of its composing models' compute, and one execution of the request's batch size (so
 * `execution_count` counts requests and `batch_stats` their sizes). The batches a pipeline
 * ensemble forms are not executions of its own: its steps report them under their names.
 */
export class EnsembleStats extends ModelStats {
  override execution(): void {
    // Executions are counted per successful request, below.
  }

  override requestSucceeded(totalNs: number, d: SuccessDurations): void {
    super.requestSucceeded(totalNs, d);
    this.addExecution(Math.max(1, d.batchSize ?? 1), d);
  }
}
