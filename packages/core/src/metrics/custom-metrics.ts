/**
 * Custom metrics that models publish (the python backend's pb_utils.MetricFamily / Metric, over
 * Triton's TRITONSERVER_MetricFamily API), aggregated on the main thread: a worker sends plain
 * operations (`MetricOp`), this registry validates each one again (the sender is user code) and
 * keeps the values the metrics endpoint renders beside Triton's own families.
 *
 * Rules (Triton's where it has them): a family name is a Prometheus metric name and may not use the
 * server's prefixes (`nv_`, `tritium_`); the same name with the same kind is the same family (the
 * first description stays), with another kind it is refused; a counter only grows (Triton's
 * "TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values."),
 * only a gauge can be set, only a histogram observes (its buckets given at creation, ascending).
 * Bounded: MAX_FAMILIES families, MAX_METRICS_PER_FAMILY label sets per family and MAX_METRICS_TOTAL in
 * all, MAX_LABELS labels of
 * MAX_LABEL_VALUE_LENGTH characters, MAX_BUCKETS buckets, descriptions of MAX_DESCRIPTION_LENGTH.
 */
import { InferError } from '../errors.ts';

export type MetricKind = 'COUNTER' | 'GAUGE' | 'HISTOGRAM';

/** One operation, as a worker sends it (plain data). */
export type MetricOp =
  | { readonly op: 'family'; readonly name: string; readonly description: string; readonly kind: MetricKind }
  | { readonly op: 'metric'; readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly buckets?: readonly number[] }
  | { readonly op: 'increment' | 'set' | 'observe'; readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number }
  | { readonly op: 'value'; readonly name: string; readonly labels: Readonly<Record<string, string>> };

export const MAX_FAMILIES = 256;
export const MAX_METRICS_PER_FAMILY = 1000;
/**
 * Label sets across every family. The per-family bound alone allowed 256 x 1000 series of 16
 * labels x 256 characters (about 1 GB of label text held on the main thread and printed by every
 * scrape) from one model's code, an uploaded one included.
 */
export const MAX_METRICS_TOTAL = 10_000;
export const MAX_LABELS = 16;
export const MAX_LABEL_VALUE_LENGTH = 256;
export const MAX_BUCKETS = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
export const RESERVED_PREFIXES = ['nv_', 'tritium_'] as const;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export interface CustomMetricSnapshot {
  readonly labels: Readonly<Record<string, string>>;
  /** Counter/gauge value; for a histogram, the sum of observations. */
  readonly value: number;
  /** Histograms: upper bounds and cumulative counts (the +Inf bucket is `count`). */
  readonly buckets?: readonly { readonly le: number; readonly count: number }[];
  readonly count?: number;
}

export interface CustomFamilySnapshot {
  readonly name: string;
  readonly description: string;
  readonly kind: MetricKind;
  readonly metrics: readonly CustomMetricSnapshot[];
}

interface Metric {
  readonly labels: Readonly<Record<string, string>>;
  value: number;
  readonly bounds?: readonly number[];
  counts?: number[];
  count: number;
}

interface Family {
  readonly name: string;
  readonly description: string;
  readonly kind: MetricKind;
  readonly metrics: Map<string, Metric>;
}

const invalid = (message: string): InferError => new InferError('INVALID_ARG', message);

function checkName(name: unknown): string {
  if (typeof name !== 'string' || !METRIC_NAME.test(name) || name.length > 200) {
    throw invalid(`metric family name ${JSON.stringify(String(name)).slice(0, 210)} is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)`);
  }
  const reserved = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (reserved) throw invalid(`metric family name '${name}' uses the server's prefix '${reserved}'`);
  return name;
}

/** The label set as validated plain strings, and its key (sorted names). */
export function labelKey(labels: unknown): { labels: Record<string, string>; key: string } {
  if (labels === undefined || labels === null) return { labels: {}, key: '' };
  if (typeof labels !== 'object' || Array.isArray(labels)) throw invalid('metric labels must be an object of label name to string value');
  const entries = Object.entries(labels as Record<string, unknown>);
  if (entries.length > MAX_LABELS) throw invalid(`a metric has at most ${MAX_LABELS} labels, got ${entries.length}`);
  const out: Record<string, string> = {};
  for (const [k, v] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!LABEL_NAME.test(k) || k.startsWith('__') || k.length > 100) throw invalid(`metric label name ${JSON.stringify(k.slice(0, 100))} is not a valid Prometheus label name`);
    if (typeof v !== 'string') throw invalid(`metric label '${k}' must have a string value`);
    if (v.length > MAX_LABEL_VALUE_LENGTH) throw invalid(`metric label '${k}' value is longer than ${MAX_LABEL_VALUE_LENGTH} characters`);
    out[k] = v;
  }
  return { labels: out, key: JSON.stringify(out) };
}

function checkBuckets(buckets: unknown): number[] {
  if (!Array.isArray(buckets) || buckets.length === 0) throw invalid('Failed to create metric. Missing required buckets.');
  if (buckets.length > MAX_BUCKETS) throw invalid(`a histogram has at most ${MAX_BUCKETS} buckets, got ${buckets.length}`);
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i];
    if (typeof b !== 'number' || !Number.isFinite(b)) throw invalid(`histogram bucket ${JSON.stringify(b)} is not a finite number`);
    if (i > 0 && b <= (buckets[i - 1] as number)) throw invalid('histogram buckets must be in increasing order');
  }
  return buckets as number[];
}

export class CustomMetrics {
  private readonly families = new Map<string, Family>();
  /** Label sets created, every family together (never removed: metrics live as long as the server). */
  private series = 0;

  /** Applies one operation; returns the value for `value`. Throws INVALID_ARG / UNSUPPORTED with the reason. */
  apply(op: MetricOp): number | undefined {
    if (typeof op !== 'object' || op === null) throw invalid('metric operation must be an object');
    switch (op.op) {
      case 'family':
        this.family(op.name, op.description, op.kind);
        return undefined;
      case 'metric':
        this.metric(op.name, op.labels, op.buckets, true);
        return undefined;
      case 'increment':
      case 'set':
      case 'observe':
        this.update(op.op, this.metric(op.name, op.labels, undefined, false), this.families.get(op.name)!.kind, op.value);
        return undefined;
      case 'value':
        return this.metric(op.name, op.labels, undefined, false).value;
      default:
        throw invalid(`unknown metric operation ${JSON.stringify((op as { op?: unknown }).op)}`);
    }
  }

  private family(name: unknown, description: unknown, kind: unknown): Family {
    const n = checkName(name);
    if (kind !== 'COUNTER' && kind !== 'GAUGE' && kind !== 'HISTOGRAM') {
      throw invalid(`metric family kind must be COUNTER, GAUGE or HISTOGRAM, got ${JSON.stringify(kind)}`);
    }
    if (typeof description !== 'string' || description.length > MAX_DESCRIPTION_LENGTH) {
      throw invalid(`metric family description must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters`);
    }
    const existing = this.families.get(n);
    if (existing) {
      if (existing.kind !== kind) throw invalid(`metric family '${n}' already exists with kind ${existing.kind}, not ${kind}`);
      return existing;
    }
    if (this.families.size >= MAX_FAMILIES) throw invalid(`too many metric families (at most ${MAX_FAMILIES})`);
    const family: Family = { name: n, description, kind, metrics: new Map() };
    this.families.set(n, family);
    return family;
  }

  private metric(name: string, labels: unknown, buckets: unknown, create: boolean): Metric {
    const family = this.families.get(name);
    if (!family) throw invalid(`metric family '${String(name).slice(0, 200)}' does not exist`);
    const { labels: clean, key } = labelKey(labels);
    if (create) {
      // The python backend checks the buckets against the kind before anything else.
      if (family.kind === 'HISTOGRAM') checkBuckets(buckets);
      else if (buckets !== undefined && buckets !== null) throw invalid('Failed to create metric. Unexpected buckets found.');
    }
    let metric = family.metrics.get(key);
    if (metric) return metric;
    if (!create) throw invalid(`metric family '${family.name}' has no metric with labels ${key || '{}'}`);
    if (family.metrics.size >= MAX_METRICS_PER_FAMILY) {
      throw invalid(`metric family '${family.name}' has too many label sets (at most ${MAX_METRICS_PER_FAMILY})`);
    }
    if (this.series >= MAX_METRICS_TOTAL) {
      throw invalid(`too many custom metrics across all families (at most ${MAX_METRICS_TOTAL} label sets)`);
    }
    this.series++;
    const bounds = family.kind === 'HISTOGRAM' ? [...(buckets as number[])] : undefined;
    metric = { labels: clean, value: 0, count: 0, ...(bounds ? { bounds, counts: bounds.map(() => 0) } : {}) };
    family.metrics.set(key, metric);
    return metric;
  }

  private update(op: 'increment' | 'set' | 'observe', m: Metric, kind: MetricKind, value: unknown): void {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`metric value must be a finite number, got ${JSON.stringify(value)}`);
    if (op === 'increment') {
      if (kind === 'HISTOGRAM') throw new InferError('UNSUPPORTED', 'TRITONSERVER_METRIC_KIND_HISTOGRAM does not support Increment');
      if (kind === 'COUNTER' && value < 0) {
        throw invalid('TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.');
      }
      m.value += value;
    } else if (op === 'set') {
      if (kind !== 'GAUGE') throw new InferError('UNSUPPORTED', `TRITONSERVER_METRIC_KIND_${kind} does not support Set`);
      m.value = value;
    } else {
      if (kind !== 'HISTOGRAM') throw new InferError('UNSUPPORTED', `TRITONSERVER_METRIC_KIND_${kind} does not support Observe`);
      m.value += value;
      m.count++;
      m.bounds!.forEach((le, i) => {
        if (value <= le) m.counts![i]!++;
      });
    }
  }

  snapshot(): CustomFamilySnapshot[] {
    return [...this.families.values()].map((f) => ({
      name: f.name,
      description: f.description,
      kind: f.kind,
      metrics: [...f.metrics.values()].map((m) => ({
        labels: m.labels,
        value: m.value,
        ...(m.bounds ? { buckets: m.bounds.map((le, i) => ({ le, count: m.counts![i]! })), count: m.count } : {}),
      })),
    }));
  }
}
