/**
 * Metrics end to end through `tritium serve`'s container: a model.ts publishing custom metrics
 * (MetricFamily counter, gauge and histogram from two instances, aggregated on the main thread)
 * beside Triton's families; `--metrics-config` summaries and the first-response histogram; and the
 * Grafana dashboard in deploy/grafana, whose every PromQL metric name this server exports.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { identityBackend } from '@tritium/core/testing';
import { defaultServeOptions } from '../src/cli/serve-options.ts';
import { startTestServer, type TestServer } from './support/start-server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const MODEL = `import { MetricFamily, Tensor, InferenceResponse, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';

export default class TritonPythonModel {
  private requests = new MetricFamily({ name: 'model_requests_total', description: 'Requests seen by the model', kind: MetricFamily.COUNTER })
    .Metric({ labels: { model: 'metrics', kind: 'text' } });
  private inflight = new MetricFamily({ name: 'model_batch_rows', description: 'Rows in the last batch', kind: MetricFamily.GAUGE }).Metric();
  private sizes = new MetricFamily({ name: 'model_row_length', description: 'Characters per row', kind: MetricFamily.HISTOGRAM })
    .Metric({ buckets: [5, 10, 20] });

  async execute(requests: InferenceRequest[]) {
    this.requests.increment(requests.length);
    this.inflight.set(requests.length);
    const out = [];
    for (const r of requests) {
      const rows = getInputTensorByName(r, 'TEXT')!.strings();
      for (const row of rows) this.sizes.observe(row.length);
      if (r.parameters().bad) new MetricFamily({ name: 'nv_inference_count', description: 'forged', kind: MetricFamily.COUNTER });
      const total = await this.requests.value();
      out.push(new InferenceResponse([new Tensor('TOTAL', new Float64Array(rows.length).fill(total), [rows.length, 1])]));
    }
    return out;
  }
}
`;

const CONFIG = `name: "metrics"
backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "TOTAL" data_type: TYPE_FP64 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
`;

const SIMPLE = `name: "simple"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
model_metrics { metric_control [ { metric_identifier { family: "nv_inference_first_response_histogram_ms" } histogram_options { buckets: [ 1, 1000 ] } } ] }
`;

/** Pads rows to the batch's longest (tritium.pad), so its executions count tokens; two requests make a batch. */
const PADDED = `name: "padded"
backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
dynamic_batching { preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 5000000 }
parameters { key: "tritium.pad.INPUT0" value: { string_value: "0" } }
parameters { key: "tritium.unpad.OUTPUT0" value: { string_value: "INPUT0" } }
`;

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  return res.text();
}

describe('metrics: custom model metrics, --metrics-config, the Grafana dashboard', () => {
  let repo: string;
  let s: TestServer;
  beforeAll(async () => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-metrics-'));
    mkdirSync(path.join(repo, 'metrics', '1'), { recursive: true });
    writeFileSync(path.join(repo, 'metrics', 'config.pbtxt'), CONFIG);
    writeFileSync(path.join(repo, 'metrics', '1', 'model.ts'), MODEL);
    mkdirSync(path.join(repo, 'simple', '1'), { recursive: true });
    writeFileSync(path.join(repo, 'simple', 'config.pbtxt'), SIMPLE);
    mkdirSync(path.join(repo, 'padded', '1'), { recursive: true });
    writeFileSync(path.join(repo, 'padded', 'config.pbtxt'), PADDED);
    s = await startTestServer(
      {
        modelRepositories: [repo],
        metricsConfig: { ...defaultServeOptions().metricsConfig, summaryLatencies: true, histogramLatencies: true, summaryQuantiles: [0.5, 0.99] },
      },
      undefined,
      undefined,
      [pythonLikeBackend(), identityBackend()],
    );
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(repo, { recursive: true, force: true });
  });

  const text = (rows: string[]) => new InferInput('TEXT', [rows.length, 1], 'BYTES').setData(rows);

  it("publishes a model's custom metrics, aggregated over its instances, beside Triton's", async () => {
    await Promise.all([['hello'], ['a much longer row'], ['x', 'yy']].map((rows) => s.http.infer('metrics', [text(rows)])));
    const total = (await s.http.infer('metrics', [text(['last'])])).asTypedArray('TOTAL', 'FP64')[0];
    const body = await scrape(s.metricsPort);
    const value = (re: RegExp) => Number(re.exec(body)?.[1]);
    // Every request counted once, whichever instance ran it; value() read the server's total.
    expect(value(/^model_requests_total\{kind="text",model="metrics"\} (\S+)$/m)).toBe(4);
    expect(total).toBe(value(/^model_requests_total\{kind="text",model="metrics"\} (\S+)$/m));
    expect(body).toContain('# HELP model_requests_total Requests seen by the model\n# TYPE model_requests_total counter');
    expect(body).toContain('# TYPE model_batch_rows gauge');
    expect(body).toContain('# TYPE model_row_length histogram');
    expect(value(/^model_row_length_count (\S+)$/m)).toBe(5);
    expect(value(/^model_row_length_bucket\{le="5"\} (\S+)$/m)).toBe(4);
    expect(value(/^model_row_length_bucket\{le="\+Inf"\} (\S+)$/m)).toBe(5);
    expect(body).toMatch(/^nv_inference_request_success\{model="metrics",version="1"\} 4$/m);
  }, 60_000);

  it("refuses a model's metric that would pose as the server's", async () => {
    const e = await s.http.infer('metrics', [text(['x'])], { parameters: { bad: true } }).catch((x: Error) => x);
    expect((e as Error).message).toContain("server's prefix 'nv_'");
    expect((await scrape(s.metricsPort)).match(/^# TYPE nv_inference_count /gm)).toHaveLength(1);
  }, 60_000);

  it('exports Triton summaries and the first-response histogram when --metrics-config enables them', async () => {
    const x = new InferInput('INPUT0', [1, 4], 'FP32').setData(new Float32Array(4));
    for (let i = 0; i < 3; i++) await s.http.infer('simple', [x]);
    const body = await scrape(s.metricsPort);
    expect(body).toContain('# TYPE nv_inference_request_summary_us summary');
    expect(body).toMatch(/^nv_inference_queue_summary_us_count\{model="simple",version="1"\} 3$/m);
    expect(body).toMatch(/^nv_inference_request_summary_us\{model="simple",version="1",quantile="0.99"\} [0-9.]+$/m);
    expect(body).toContain('# TYPE nv_inference_first_response_histogram_ms histogram');
    // The model's own buckets (model_metrics), Triton's per-model override.
    expect(body).toMatch(/^nv_inference_first_response_histogram_ms_bucket\{model="simple",version="1",le="1000"\} 3$/m);
    expect(body).toMatch(/^nv_inference_first_response_histogram_ms_bucket\{model="simple",version="1",le="\+Inf"\} 3$/m);
  }, 60_000);

  it('counts padded tokens per execution and padding efficiency, in /metrics and the statistics', async () => {
    const row = (n: number) => new InferInput('INPUT0', [1, n], 'FP32').setData(new Float32Array(n).fill(1));
    // Lengths 2 and 6 in one batch (preferred size 2): 8 real tokens, padded to 2 x 6 = 12.
    const answers = await Promise.all([s.http.infer('padded', [row(2)]), s.http.infer('padded', [row(6)])]);
    expect(answers.map((a) => a.asTypedArray('OUTPUT0', 'FP32').length)).toEqual([2, 6]);
    const body = await scrape(s.metricsPort);
    expect(body).toContain('# TYPE tritium_inference_padded_tokens histogram');
    expect(body).toMatch(/^tritium_inference_padded_tokens_count\{model="padded",version="1"\} 1$/m);
    expect(body).toMatch(/^tritium_inference_padded_tokens_sum\{model="padded",version="1"\} 12$/m);
    expect(body).toMatch(/^tritium_inference_padded_tokens_bucket\{model="padded",version="1",le="16"\} 1$/m);
    expect(body).toMatch(/^tritium_inference_real_tokens_total\{model="padded",version="1"\} 8$/m);
    expect(body).toMatch(/^tritium_inference_padding_efficiency\{model="padded",version="1"\} 0.6666/m);
    // Models that pad nothing have no token samples.
    expect(body).not.toMatch(/^tritium_inference_real_tokens_total\{model="simple"/m);
    const stats = (await (await fetch(`http://${s.httpUrl}/v2/models/padded/stats`)).json()) as { model_stats: { tritium?: unknown }[] };
    expect(stats.model_stats[0]!.tritium).toEqual({ tokens: { executions: 1, real: 8, padded: 12, padding_efficiency: 8 / 12 } });
  }, 60_000);

  it('the Grafana dashboard uses only metric names this server exports', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/tritium-dashboard.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const body = await scrape(s.metricsPort);
    const families = new Set([...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]!));
    const names = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:nv|tritium)_[a-z0-9_]+)\b/g)].map((m) => m[1]!)));
    names.add(dashboard.templating.list[0].query.match(/label_values\((\w+)/)[1]);
    for (const name of names) {
      const family = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
      expect(families.has(family), `${name} is not exported`).toBe(true);
      // Some sample of it is there, not only its HELP line.
      expect(body).toMatch(new RegExp(`^${name}(\\{| )`, 'm'));
    }
    // What the issue asks the dashboard to show.
    const titles = dashboard.panels.map((p: { title: string }) => p.title.toLowerCase()).join('\n');
    for (const t of ['throughput', 'latency percentiles', 'queue time', 'compute time', 'batch size', 'failure by reason', 'padding efficiency', 'padded tokens']) {
      expect(titles).toContain(t);
    }
  }, 60_000);
});
