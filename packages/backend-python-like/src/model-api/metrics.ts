/**
 * `pb_utils.MetricFamily` / `Metric`: custom metrics a model publishes on the server's metrics
 * endpoint beside Triton's. Each operation is checked here first (a bad name, label, bucket list
 * or value throws at once, as the python backend raises), then sent to the server, which
 * aggregates every instance's operations on its main thread and checks them again.
 *
 * ```ts
 * import { MetricFamily } from '@tritium/backend-python-like/model';
 *
 * const family = new MetricFamily({ name: 'requests_process_latency_ns', description: 'Cumulative time spent processing requests', kind: MetricFamily.COUNTER });
 * const metric = family.Metric({ labels: { model: 'custom_metrics', version: '1' } });
 * metric.increment(1234);
 * const total = await metric.value(); // the server's value, all instances together
 * const latency = new MetricFamily({ name: 'tokenize_ms', description: 'Tokenizer time', kind: MetricFamily.HISTOGRAM })
 *   .Metric({ buckets: [1, 5, 10, 50] });
 * latency.observe(3.2);
 * ```
 */
import { CustomMetrics, type MetricKind, type MetricOp } from '@tritium/core/metrics';
import { runtimeLink } from './runtime-link.ts';

/** Validates every operation where it is made, and holds the values when no server runs the model (`tritium model run`). */
const local = new CustomMetrics();

function send(op: MetricOp): void {
  local.apply(op);
  runtimeLink()?.metric?.(op);
}

export interface MetricFamilyInit {
  readonly name: string;
  readonly description: string;
  readonly kind: MetricKind;
}

export interface MetricInit {
  /** Label name → value (strings). Empty or absent: no labels. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Histograms only: bucket upper bounds, ascending. */
  readonly buckets?: readonly number[];
}

export class MetricFamily {
  static readonly COUNTER = 'COUNTER' as const;
  static readonly GAUGE = 'GAUGE' as const;
  static readonly HISTOGRAM = 'HISTOGRAM' as const;
  readonly name: string;
  readonly description: string;
  readonly kind: MetricKind;

  /** The same name and kind as an existing family is that family (its first description stays). */
  constructor(init: MetricFamilyInit) {
    send({ op: 'family', name: init.name, description: init.description, kind: init.kind });
    this.name = init.name;
    this.description = init.description;
    this.kind = init.kind;
  }

  /** A metric of this family with these labels (the same labels: the same metric). */
  Metric(init: MetricInit = {}): Metric {
    const labels = { ...(init.labels ?? {}) };
    send({ op: 'metric', name: this.name, labels, ...(init.buckets ? { buckets: [...init.buckets] } : {}) });
    return new Metric(this.name, labels);
  }
}

export class Metric {
  constructor(
    readonly familyName: string,
    readonly labels: Readonly<Record<string, string>>,
  ) {}

  /** Counters (non-negative) and gauges. */
  increment(value: number): void {
    send({ op: 'increment', name: this.familyName, labels: this.labels, value });
  }

  /** Gauges only. */
  set(value: number): void {
    send({ op: 'set', name: this.familyName, labels: this.labels, value });
  }

  /** Histograms only. */
  observe(value: number): void {
    send({ op: 'observe', name: this.familyName, labels: this.labels, value });
  }

  /** The value on the server (every instance of the model, and other models using the family); for a histogram, the sum. */
  async value(): Promise<number> {
    const op = { op: 'value' as const, name: this.familyName, labels: this.labels };
    const link = runtimeLink();
    return link?.metricValue ? link.metricValue(op) : (local.apply(op) ?? 0);
  }
}
