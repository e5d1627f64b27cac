/** Prometheus rendering: Triton's names, types and labels, metric_tags as `_<key>`, escaping. */
import { expect, it } from 'vitest';
import type { ModelMetricsSnapshot } from '@tritium/core';
import { CpuSampler, renderMetrics } from '../src/metrics/prometheus.ts';

const snapshot: ModelMetricsSnapshot = {
  model: 'm',
  version: '2',
  metricTags: { team: 'a"b\\c', 'cost-center': 'x' },
  requestSuccess: 3,
  requestFailure: { REJECTED: 1, CANCELED: 0, BACKEND: 2, OTHER: 0 },
  inferenceCount: 5,
  executionCount: 2,
  pendingRequests: 1,
  requestDurationUs: 10.4,
  queueDurationUs: 1,
  computeInputDurationUs: 2,
  computeInferDurationUs: 3,
  computeOutputDurationUs: 4,
  loadDurationSecs: 0.25,
  crashRetries: 7,
  poisonRequests: 1,
  instances: [{ name: 'm_0_0', healthy: false, restarts: 3, executeOverruns: 2, logLinesDropped: 7 }],
};

it('renders Triton metric families with labels', () => {
  const text = renderMetrics([snapshot], new CpuSampler());
  const labels = 'model="m",version="2",_team="a\\"b\\\\c",_cost_center="x"';
  expect(text).toContain(`nv_inference_request_success{${labels}} 3\n`);
  expect(text).toContain(`nv_inference_request_failure{${labels},reason="REJECTED"} 1\n`);
  expect(text).toContain(`nv_inference_request_failure{${labels},reason="BACKEND"} 2\n`);
  expect(text).toContain(`nv_inference_count{${labels}} 5\n`);
  expect(text).toContain(`nv_inference_exec_count{${labels}} 2\n`);
  expect(text).toContain(`nv_inference_pending_request_count{${labels}} 1\n`);
  expect(text).toContain(`nv_inference_request_duration_us{${labels}} 10\n`);
  expect(text).toContain(`nv_model_load_duration_secs{${labels}} 0.25\n`);
  expect(text).toContain(`tritium_instance_healthy{${labels},instance="m_0_0"} 0\n`);
  expect(text).toContain(`tritium_instance_restarts_total{${labels},instance="m_0_0"} 3\n`);
  expect(text).toContain(`tritium_execute_overrun_total{${labels},instance="m_0_0"} 2\n`);
  expect(text).toMatch(/^# TYPE tritium_execute_overrun_total counter$/m);
  expect(text).toContain(`tritium_log_lines_dropped_total{${labels},instance="m_0_0"} 7\n`);
  expect(text).toMatch(/^# TYPE tritium_log_lines_dropped_total counter$/m);
  expect(text).toContain(`tritium_inference_crash_retry_total{${labels}} 7\n`);
  expect(text).toContain(`tritium_inference_poison_request_total{${labels}} 1\n`);
  expect(text).toMatch(/^# TYPE tritium_inference_poison_request_total counter$/m);
  expect(text).toMatch(/^# TYPE nv_inference_pending_request_count gauge$/m);
  expect(text).toMatch(/^# TYPE nv_inference_compute_infer_duration_us counter$/m);
  expect(text).toMatch(/^nv_cpu_memory_total_bytes \d+$/m);
  expect(text.endsWith('\n')).toBe(true);
});
