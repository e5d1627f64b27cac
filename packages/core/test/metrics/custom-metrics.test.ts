/** Custom metrics as the main thread keeps them: Triton's rules and messages, and the bounds. */
import { describe, expect, it } from 'vitest';
import { CustomMetrics, MAX_FAMILIES, MAX_METRICS_PER_FAMILY, MAX_METRICS_TOTAL } from '../../src/metrics/custom-metrics.ts';

describe('CustomMetrics', () => {
  it('counts, sets and observes per label set; the same name and kind is the same family', () => {
    const m = new CustomMetrics();
    m.apply({ op: 'family', name: 'req_total', description: 'requests', kind: 'COUNTER' });
    m.apply({ op: 'family', name: 'req_total', description: 'ignored, the first stays', kind: 'COUNTER' });
    m.apply({ op: 'metric', name: 'req_total', labels: { b: '2', a: '1' } });
    m.apply({ op: 'increment', name: 'req_total', labels: { a: '1', b: '2' }, value: 3 });
    m.apply({ op: 'increment', name: 'req_total', labels: { b: '2', a: '1' }, value: 4 });
    expect(m.apply({ op: 'value', name: 'req_total', labels: { a: '1', b: '2' } })).toBe(7);
    m.apply({ op: 'family', name: 'lat', description: 'latency', kind: 'HISTOGRAM' });
    m.apply({ op: 'metric', name: 'lat', labels: {}, buckets: [1, 10] });
    for (const v of [0.5, 5, 50]) m.apply({ op: 'observe', name: 'lat', labels: {}, value: v });
    const snap = m.snapshot();
    expect(snap[0]).toMatchObject({ name: 'req_total', description: 'requests', kind: 'COUNTER', metrics: [{ labels: { a: '1', b: '2' }, value: 7 }] });
    expect(snap[1]!.metrics[0]).toEqual({ labels: {}, value: 55.5, count: 3, buckets: [{ le: 1, count: 1 }, { le: 10, count: 2 }] });
  });

  it("refuses what Triton refuses, with its words, and the server's names", () => {
    const m = new CustomMetrics();
    m.apply({ op: 'family', name: 'c', description: '', kind: 'COUNTER' });
    m.apply({ op: 'metric', name: 'c', labels: {} });
    expect(() => m.apply({ op: 'increment', name: 'c', labels: {}, value: -1 })).toThrow(
      'TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.',
    );
    expect(() => m.apply({ op: 'set', name: 'c', labels: {}, value: 1 })).toThrow('TRITONSERVER_METRIC_KIND_COUNTER does not support Set');
    expect(() => m.apply({ op: 'family', name: 'c', description: '', kind: 'GAUGE' })).toThrow("already exists with kind COUNTER");
    expect(() => m.apply({ op: 'family', name: 'nv_inference_count', description: '', kind: 'COUNTER' })).toThrow("server's prefix 'nv_'");
    expect(() => m.apply({ op: 'family', name: 'tritium_x', description: '', kind: 'GAUGE' })).toThrow("server's prefix 'tritium_'");
    expect(() => m.apply({ op: 'family', name: 'bad-name', description: '', kind: 'GAUGE' })).toThrow('not a valid Prometheus metric name');
    expect(() => m.apply({ op: 'metric', name: 'c', labels: { 'bad label': 'x' } })).toThrow('not a valid Prometheus label name');
    expect(() => m.apply({ op: 'metric', name: 'c', labels: { __name__: 'x' } })).toThrow('not a valid Prometheus label name');
    expect(() => m.apply({ op: 'metric', name: 'c', labels: { a: 1 as unknown as string } })).toThrow("label 'a' must have a string value");
    expect(() => m.apply({ op: 'metric', name: 'c', labels: {}, buckets: [1] })).toThrow('Unexpected buckets found');
    m.apply({ op: 'family', name: 'h', description: '', kind: 'HISTOGRAM' });
    expect(() => m.apply({ op: 'metric', name: 'h', labels: {} })).toThrow('Missing required buckets');
    expect(() => m.apply({ op: 'metric', name: 'h', labels: {}, buckets: [2, 1] })).toThrow('increasing order');
    expect(() => m.apply({ op: 'increment', name: 'nope', labels: {}, value: 1 })).toThrow("metric family 'nope' does not exist");
    expect(() => m.apply({ op: 'increment', name: 'c', labels: {}, value: Number.NaN })).toThrow('finite number');
  });

  it('is bounded: families and label sets', () => {
    const m = new CustomMetrics();
    for (let i = 0; i < MAX_FAMILIES; i++) m.apply({ op: 'family', name: `f${i}`, description: '', kind: 'GAUGE' });
    expect(() => m.apply({ op: 'family', name: 'one_more', description: '', kind: 'GAUGE' })).toThrow(`at most ${MAX_FAMILIES}`);
    for (let i = 0; i < MAX_METRICS_PER_FAMILY; i++) m.apply({ op: 'metric', name: 'f0', labels: { i: String(i) } });
    expect(() => m.apply({ op: 'metric', name: 'f0', labels: { i: 'x' } })).toThrow(`at most ${MAX_METRICS_PER_FAMILY}`);
  });

  it('is bounded across families: 10,000 label sets in all (256 families x 1000 sets of 16 long labels held about 1 GB)', () => {
    const m = new CustomMetrics();
    const families = Math.ceil(MAX_METRICS_TOTAL / MAX_METRICS_PER_FAMILY) + 1;
    let created = 0;
    let refused = '';
    for (let f = 0; f < families && !refused; f++) {
      m.apply({ op: 'family', name: `f${f}`, description: '', kind: 'GAUGE' });
      for (let i = 0; i < MAX_METRICS_PER_FAMILY && !refused; i++) {
        try {
          m.apply({ op: 'metric', name: `f${f}`, labels: { i: String(i) } });
          created++;
        } catch (e) {
          refused = (e as Error).message;
        }
      }
    }
    expect(created).toBe(MAX_METRICS_TOTAL);
    expect(refused).toBe(`too many custom metrics across all families (at most ${MAX_METRICS_TOTAL} label sets)`);
    // Existing label sets still take updates.
    m.apply({ op: 'set', name: 'f0', labels: { i: '0' }, value: 3 });
    expect(m.apply({ op: 'value', name: 'f0', labels: { i: '0' } })).toBe(3);
  });
});
