/**
 * Renders Triton's Prometheus metrics (names, types, help and labels as Triton's core metrics.cc)
 * from `InferenceServerApi.metrics()`: the counters (latency counters unless `counter_latencies=false`),
 * the `summary_latencies` summaries and the `histogram_latencies` first-response histogram when
 * `--metrics-config` enables them, CPU gauges, Tritium's instance-health gauges, then the custom
 * families models published (python-like MetricFamily).
 */
import os from 'node:os';
import type { ModelMetricsSnapshot } from '@tritium/core';
import type { CustomFamilySnapshot, LatencySummaryName, TokenStats } from '@tritium/core/metrics';

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function labels(pairs: Record<string, string>): string {
  const body = Object.entries(pairs)
    .map(([k, v]) => `${k}="${escape(v)}"`)
    .join(',');
  return body ? `{${body}}` : '';
}

/** A label name valid in Prometheus (metric_tags keys become `_<key>`). */
const labelName = (k: string) => `_${k}`.replace(/[^a-zA-Z0-9_]/g, '_');

interface Family {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'summary' | 'histogram';
  readonly help: string;
  readonly lines: string[];
}

function family(name: string, type: Family['type'], help: string): Family {
  return { name, type, help, lines: [] };
}

/** CPU utilisation between scrapes (0..1), as nv_cpu_utilization. */
export class CpuSampler {
  private last = os.cpus().map((c) => c.times);

  utilization(): number {
    const now = os.cpus().map((c) => c.times);
    let busy = 0;
    let total = 0;
    now.forEach((t, i) => {
      const p = this.last[i] ?? t;
      const idle = t.idle - p.idle;
      const all = t.user - p.user + t.nice - p.nice + t.sys - p.sys + t.irq - p.irq + idle;
      busy += all - idle;
      total += all;
    });
    this.last = now;
    return total > 0 ? busy / total : 0;
  }
}

/** Triton's summary families (metrics.cc), by the statistic they summarize. */
const SUMMARIES: readonly [LatencySummaryName, string, string][] = [
  ['request', 'nv_inference_request_summary_us', 'Summary of inference request duration in microseconds (includes cached requests)'],
  ['queue', 'nv_inference_queue_summary_us', 'Summary of inference queuing duration in microseconds (includes cached requests)'],
  ['compute_input', 'nv_inference_compute_input_summary_us', 'Cumulative compute input duration in microseconds (does not include cached requests)'],
  ['compute_infer', 'nv_inference_compute_infer_summary_us', 'Cumulative compute inference duration in microseconds (does not include cached requests)'],
  ['compute_output', 'nv_inference_compute_output_summary_us', 'Cumulative inference compute output duration in microseconds (does not include cached requests)'],
];

const LATENCY_COUNTERS = new Set([
  'nv_inference_request_duration_us',
  'nv_inference_queue_duration_us',
  'nv_inference_compute_input_duration_us',
  'nv_inference_compute_infer_duration_us',
  'nv_inference_compute_output_duration_us',
]);

const num = (v: number): string => (Number.isNaN(v) ? 'NaN' : String(v));

export interface RenderOptions {
  /** `--metrics-config counter_latencies` (default true). */
  readonly counterLatencies?: boolean;
  readonly custom?: readonly CustomFamilySnapshot[];
}

/** Triton's per-model families (and Tritium's), in the order they are written. */
function modelFamilies() {
  return {
    success: family('nv_inference_request_success', 'counter', 'Number of successful inference requests, all batch sizes'),
    failure: family('nv_inference_request_failure', 'counter', 'Number of failed inference requests, all batch sizes'),
    count: family('nv_inference_count', 'counter', 'Number of inferences performed (does not include cached requests)'),
    exec: family('nv_inference_exec_count', 'counter', 'Number of model executions performed (does not include cached requests)'),
    pending: family('nv_inference_pending_request_count', 'gauge', 'Instantaneous number of pending requests awaiting execution per-model.'),
    request: family('nv_inference_request_duration_us', 'counter', 'Cumulative inference request duration in microseconds (includes cached requests)'),
    queue: family('nv_inference_queue_duration_us', 'counter', 'Cumulative inference queuing duration in microseconds (includes cached requests)'),
    input: family('nv_inference_compute_input_duration_us', 'counter', 'Cumulative compute input duration in microseconds (does not include cached requests)'),
    infer: family('nv_inference_compute_infer_duration_us', 'counter', 'Cumulative compute inference duration in microseconds (does not include cached requests)'),
    output: family('nv_inference_compute_output_duration_us', 'counter', 'Cumulative inference compute output duration in microseconds (does not include cached requests)'),
    load: family('nv_model_load_duration_secs', 'gauge', 'Model load time in seconds'),
    healthy: family('tritium_instance_healthy', 'gauge', 'Whether a model instance (worker) is healthy (1) or down (0)'),
    restarts: family('tritium_instance_restarts_total', 'counter', 'Number of times a model instance (worker) was restarted after a crash'),
    overruns: family('tritium_execute_overrun_total', 'counter', 'Number of executes that ran past the instance warn threshold (tritium.execute_warn_ms)'),
    logDropped: family('tritium_log_lines_dropped_total', 'counter', 'Number of lines of a model instance\'s output dropped over --model-log-rate'),
    crashRetries: family('tritium_inference_crash_retry_total', 'counter', 'Number of requests re-run alone because their instance crashed running their batch'),
    poison: family('tritium_inference_poison_request_total', 'counter', 'Number of requests that crashed their instance running alone and failed alone as the cause'),
    paddedTokens: family('tritium_inference_padded_tokens', 'histogram', 'Padded tokens (rows x longest row) per execution of padded or length-grouped rows'),
    realTokens: family('tritium_inference_real_tokens_total', 'counter', 'Tokens of the rows themselves (without padding) in padded or length-grouped executions'),
    efficiency: family('tritium_inference_padding_efficiency', 'gauge', 'Real tokens / padded tokens of padded or length-grouped executions since the model loaded'),
    firstResponse: family('nv_inference_first_response_histogram_ms', 'histogram', 'Duration from request to first response in milliseconds'),
    cacheHits: family('nv_cache_num_hits_per_model', 'counter', 'Number of cache hits per model'),
    cacheHitUs: family('nv_cache_hit_duration_per_model', 'counter', 'Total cache hit duration per model, in microseconds'),
    cacheMisses: family('nv_cache_num_misses_per_model', 'counter', 'Number of cache misses per model'),
    cacheMissUs: family('nv_cache_miss_duration_per_model', 'counter', 'Total cache miss (insert+lookup) duration per model, in microseconds'),
  };
}

type ModelFamilies = ReturnType<typeof modelFamilies>;
type SummaryFamilies = readonly { key: LatencySummaryName; fam: Family }[];

export function renderMetrics(snapshots: readonly ModelMetricsSnapshot[], cpu: CpuSampler, options: RenderOptions = {}): string {
  const f = modelFamilies();
  // Only models that answer from the response cache have these (Triton's reporter adds them per model).
  // Only models that padded rows have token families (padding-aware or length-aware batching).
  const cacheFamilies = new Set([f.cacheHits, f.cacheHitUs, f.cacheMisses, f.cacheMissUs, f.realTokens, f.efficiency]);
  const summaries = SUMMARIES.map(([key, name, help]) => ({ key, fam: family(name, 'summary', help) }));
  for (const s of snapshots) renderModel(f, summaries, s);
  const out: string[] = [];
  const counterLatencies = options.counterLatencies !== false;
  for (const fam of [...Object.values(f), ...summaries.map((x) => x.fam)]) {
    if (!counterLatencies && LATENCY_COUNTERS.has(fam.name)) continue;
    if ((fam.type === 'summary' || fam.type === 'histogram' || cacheFamilies.has(fam)) && fam.lines.length === 0) continue;
    out.push(`# HELP ${fam.name} ${fam.help}`, `# TYPE ${fam.name} ${fam.type}`, ...fam.lines);
  }
  out.push(...renderCpu(cpu));
  for (const fam of options.custom ?? []) out.push(...renderCustom(fam));
  return out.join('\n') + '\n';
}

/** One model version's lines, added to each family. */
function renderModel(f: ModelFamilies, summaries: SummaryFamilies, s: ModelMetricsSnapshot): void {
  const base: Record<string, string> = { model: s.model, version: s.version };
  // Triton labels a model's metrics with its namespace only while namespacing is on.
  if (s.namespace) base['namespace'] = s.namespace;
  for (const [k, v] of Object.entries(s.metricTags)) base[labelName(k)] = v;
  const l = labels(base);
  f.success.lines.push(`nv_inference_request_success${l} ${s.requestSuccess}`);
  for (const reason of ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'] as const) {
    f.failure.lines.push(`nv_inference_request_failure${labels({ ...base, reason })} ${s.requestFailure[reason] ?? 0}`);
  }
  f.count.lines.push(`nv_inference_count${l} ${s.inferenceCount}`);
  f.exec.lines.push(`nv_inference_exec_count${l} ${s.executionCount}`);
  f.pending.lines.push(`nv_inference_pending_request_count${l} ${s.pendingRequests}`);
  f.request.lines.push(`nv_inference_request_duration_us${l} ${Math.round(s.requestDurationUs)}`);
  f.queue.lines.push(`nv_inference_queue_duration_us${l} ${Math.round(s.queueDurationUs)}`);
  f.input.lines.push(`nv_inference_compute_input_duration_us${l} ${Math.round(s.computeInputDurationUs)}`);
  f.infer.lines.push(`nv_inference_compute_infer_duration_us${l} ${Math.round(s.computeInferDurationUs)}`);
  f.output.lines.push(`nv_inference_compute_output_duration_us${l} ${Math.round(s.computeOutputDurationUs)}`);
  f.load.lines.push(`nv_model_load_duration_secs${l} ${s.loadDurationSecs}`);
  f.crashRetries.lines.push(`tritium_inference_crash_retry_total${l} ${s.crashRetries}`);
  f.poison.lines.push(`tritium_inference_poison_request_total${l} ${s.poisonRequests}`);
  if (s.cache) {
    f.cacheHits.lines.push(`nv_cache_num_hits_per_model${l} ${s.cache.hits}`);
    f.cacheHitUs.lines.push(`nv_cache_hit_duration_per_model${l} ${Math.round(s.cache.hitDurationUs)}`);
    f.cacheMisses.lines.push(`nv_cache_num_misses_per_model${l} ${s.cache.misses}`);
    f.cacheMissUs.lines.push(`nv_cache_miss_duration_per_model${l} ${Math.round(s.cache.missDurationUs)}`);
  }
  if (s.tokens) renderTokens(f, s.tokens, base);
  renderLatency(f, summaries, s, base);
  for (const inst of s.instances) {
    const il = labels({ ...base, instance: inst.name });
    f.healthy.lines.push(`tritium_instance_healthy${il} ${inst.healthy ? 1 : 0}`);
    f.restarts.lines.push(`tritium_instance_restarts_total${il} ${inst.restarts}`);
    f.overruns.lines.push(`tritium_execute_overrun_total${il} ${inst.executeOverruns}`);
    f.logDropped.lines.push(`tritium_log_lines_dropped_total${il} ${inst.logLinesDropped}`);
  }
}

/** A version's latency summaries and first-response histogram, where `--metrics-config` enables them. */
function renderLatency(f: ModelFamilies, summaries: SummaryFamilies, s: ModelMetricsSnapshot, base: Record<string, string>): void {
  const l = labels(base);
  const latency = s.latency;
  if (latency?.summaries) {
    for (const { key, fam } of summaries) {
      const sum = latency.summaries[key];
      fam.lines.push(`${fam.name}_count${l} ${sum.count}`, `${fam.name}_sum${l} ${num(sum.sum)}`);
      for (const [q, v] of sum.quantiles) fam.lines.push(`${fam.name}${labels({ ...base, quantile: String(q) })} ${num(v)}`);
    }
  }
  if (latency?.firstResponse) {
    const h = latency.firstResponse;
    const name = f.firstResponse.name;
    f.firstResponse.lines.push(`${name}_count${l} ${h.count}`, `${name}_sum${l} ${num(h.sum)}`);
    for (const b of h.buckets) f.firstResponse.lines.push(`${name}_bucket${labels({ ...base, le: String(b.le) })} ${b.count}`);
    f.firstResponse.lines.push(`${name}_bucket${labels({ ...base, le: '+Inf' })} ${h.count}`);
  }
}

/** The CPU gauges: utilization since the last scrape, total and used memory. */
function renderCpu(cpu: CpuSampler): string[] {
  const total = os.totalmem();
  return [
    '# HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]',
    '# TYPE nv_cpu_utilization gauge',
    `nv_cpu_utilization ${cpu.utilization().toFixed(6)}`,
    '# HELP nv_cpu_memory_total_bytes CPU total memory (RAM), in bytes',
    '# TYPE nv_cpu_memory_total_bytes gauge',
    `nv_cpu_memory_total_bytes ${total}`,
    '# HELP nv_cpu_memory_used_bytes CPU used memory (RAM), in bytes',
    '# TYPE nv_cpu_memory_used_bytes gauge',
    `nv_cpu_memory_used_bytes ${total - os.freemem()}`,
  ];
}

interface TokenFamilies {
  readonly paddedTokens: Family;
  readonly realTokens: Family;
  readonly efficiency: Family;
}

/** A version's token counts: padded tokens per execution (histogram), real tokens, efficiency. */
function renderTokens(f: TokenFamilies, t: TokenStats, base: Record<string, string>): void {
  const l = labels(base);
  const h = t.paddedPerExecution;
  const name = f.paddedTokens.name;
  f.paddedTokens.lines.push(`${name}_count${l} ${h.count}`, `${name}_sum${l} ${h.sum}`);
  for (const b of h.buckets) f.paddedTokens.lines.push(`${name}_bucket${labels({ ...base, le: String(b.le) })} ${b.count}`);
  f.paddedTokens.lines.push(`${name}_bucket${labels({ ...base, le: '+Inf' })} ${h.count}`);
  f.realTokens.lines.push(`tritium_inference_real_tokens_total${l} ${t.real}`);
  f.efficiency.lines.push(`tritium_inference_padding_efficiency${l} ${t.padded > 0 ? num(t.real / t.padded) : 1}`);
}

const helpText = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

/** One custom family (validated names, escaped label values and help) in the text format. */
function renderCustom(fam: CustomFamilySnapshot): string[] {
  const type = fam.kind === 'COUNTER' ? 'counter' : fam.kind === 'GAUGE' ? 'gauge' : 'histogram';
  const out = [`# HELP ${fam.name} ${helpText(fam.description)}`, `# TYPE ${fam.name} ${type}`];
  for (const m of fam.metrics) {
    const l = labels({ ...m.labels });
    if (!m.buckets) {
      out.push(`${fam.name}${l} ${num(m.value)}`);
      continue;
    }
    out.push(`${fam.name}_count${l} ${m.count ?? 0}`, `${fam.name}_sum${l} ${num(m.value)}`);
    for (const b of m.buckets) out.push(`${fam.name}_bucket${labels({ ...m.labels, le: String(b.le) })} ${b.count}`);
    out.push(`${fam.name}_bucket${labels({ ...m.labels, le: '+Inf' })} ${m.count ?? 0}`);
  }
  return out;
}
