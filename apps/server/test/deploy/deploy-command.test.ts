/**
 * `tritium deploy`: the numbers that must agree with the server (grace period vs
 * --exit-timeout-secs, probes vs ports, queries vs the exported metric names), the files
 * --output-dir writes, and every refused flag with a message naming it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ModelMetricsSnapshot } from '@tritium/core';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { deployCommand, deployManifests, parseDeployArgs } from '../../src/cli/deploy-command.ts';
import type { ClusterServingRuntime, InferenceService } from '../../src/deploy/kserve-types.ts';
import { CpuSampler, renderMetrics } from '../../src/metrics/prometheus.ts';

function render(argv: string[]): object[] {
  const parsed = parseDeployArgs(argv, '1.2.3');
  if (parsed === 'help') throw new Error('help');
  return deployManifests(parsed.options);
}
const find = <T>(manifests: object[], kind: string) => manifests.find((m) => (m as { kind: string }).kind === kind) as T;

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await deployCommand(argv, { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } });
  return { code, out, err };
}

describe('tritium deploy kubernetes', () => {
  it('gives the pod a grace period that covers the preStop sleep and the server drain', () => {
    const d = find<IDeployment>(render(['kubernetes', '--pre-stop-sleep-secs', '7', '--', '--exit-timeout-secs=45']), 'Deployment');
    const pod = d.spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(c.lifecycle!.preStop!.exec!.command).toEqual(['sleep', '7']);
    expect(c.args).toEqual(['serve', '--model-repository=/opt/tritium/model_repository', '--health-port=8003', '--exit-timeout-secs=45']);
    // tritium serve forces its exit 2 s after --exit-timeout-secs; the kubelet must not SIGKILL before.
    expect(pod.terminationGracePeriodSeconds).toBe(7 + 45 + 5);
    expect(pod.terminationGracePeriodSeconds! - 7).toBeGreaterThan(45 + 2);
  });

  it('probes the health endpoints on the health listener the server binds (its own thread)', () => {
    const d = find<IDeployment>(render(['kubernetes', '--', '--http-port=9000', '--grpc-port=9001', '--metrics-port=9002', '--health-port=9003']), 'Deployment');
    const c = d.spec!.template.spec!.containers[0]!;
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 9000, protocol: 'TCP' },
      { name: 'grpc', containerPort: 9001, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9002, protocol: 'TCP' },
      { name: 'health', containerPort: 9003, protocol: 'TCP' },
    ]);
    expect(c.livenessProbe!.httpGet).toEqual({ path: '/v2/health/live', port: 'health' });
    expect(c.readinessProbe!.httpGet).toEqual({ path: '/v2/health/ready', port: 'health' });
    expect(c.startupProbe!.httpGet).toEqual({ path: '/v2/health/ready', port: 'health' });
    // By default on 8003.
    const byDefault = find<IDeployment>(render(['kubernetes']), 'Deployment').spec!.template.spec!.containers[0]!;
    expect(byDefault.args).toContain('--health-port=8003');
    expect(byDefault.livenessProbe!.httpGet).toEqual({ path: '/v2/health/live', port: 'health' });
    expect(d.spec!.template.metadata!.annotations!['prometheus.io/port']).toBe('9002');
    expect(c.image).toBe('tritium:1.2.3');
  });

  it("probes as the health listener requires: HTTPS with --http-use-ssl, the header of a restricted 'health'", () => {
    const d = find<IDeployment>(
      render(['kubernetes', '--', '--http-use-ssl-mutual=true', '--http-server-cert=/c.pem', '--http-server-key=/k.pem', '--http-root-cert=/ca.pem', '--http-restricted-api=health:probe-token=s3cret']),
      'Deployment',
    );
    const c = d.spec!.template.spec!.containers[0]!;
    const expected = { port: 'health', scheme: 'HTTPS', httpHeaders: [{ name: 'probe-token', value: 's3cret' }] };
    expect(c.livenessProbe!.httpGet).toEqual({ path: '/v2/health/live', ...expected });
    expect(c.readinessProbe!.httpGet).toEqual({ path: '/v2/health/ready', ...expected });
    expect(c.startupProbe!.httpGet).toEqual({ path: '/v2/health/ready', ...expected });
  });

  it('KServe runtimes keep probing the http port (no health listener by default there)', () => {
    const c = find<{ spec: { containers: { livenessProbe: { httpGet: unknown } }[] } }>(
      render(['kserve', '--storage-uri', 's3://b/r']),
      'ClusterServingRuntime',
    ).spec.containers[0]!;
    expect(c.livenessProbe.httpGet).toEqual({ path: '/v2/health/live', port: 'http' });
  });

  it('leaves the replica count to the autoscaler, and sets it without one', () => {
    expect(find<IDeployment>(render(['kubernetes']), 'Deployment').spec!.replicas).toBeUndefined();
    expect(find<IDeployment>(render(['kubernetes', '--autoscaler', 'none', '--min-replicas', '3']), 'Deployment').spec!.replicas).toBe(3);
    expect(render(['kubernetes', '--autoscaler', 'none']).map((m) => (m as { kind: string }).kind)).toEqual(['Deployment', 'Service', 'PodDisruptionBudget']);
  });

  it('scales on metrics the server exports under Triton names, with their labels', () => {
    const so = find<IScaledObject>(render(['kubernetes', '--scale-model', 'sentiment_ensemble', '--target-queue-ms', '250']), 'ScaledObject');
    const [pending, queue] = so.spec.triggers;
    expect(pending!.metricType).toBe('AverageValue');
    expect(queue!.metricType).toBe('Value');
    expect(queue!.metadata['threshold']).toBe('250000'); // the counters are in microseconds
    const snapshot: ModelMetricsSnapshot = {
      model: 'sentiment_ensemble',
      version: '1',
      metricTags: {},
      requestSuccess: 1,
      requestFailure: { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 },
      inferenceCount: 1,
      executionCount: 1,
      pendingRequests: 0,
      requestDurationUs: 1,
      queueDurationUs: 1,
      computeInputDurationUs: 1,
      computeInferDurationUs: 1,
      computeOutputDurationUs: 1,
      loadDurationSecs: 1,
      crashRetries: 0,
      poisonRequests: 0,
      instances: [],
    };
    const exported = renderMetrics([snapshot], new CpuSampler());
    for (const t of so.spec.triggers) {
      const selectors = [...t.metadata['query']!.matchAll(/(nv_[a-z_]+)\{([^}]*)\}/g)];
      expect(selectors.length).toBeGreaterThan(0);
      for (const [, name, labels] of selectors) {
        expect(exported).toMatch(new RegExp(`^# TYPE ${name} (gauge|counter)$`, 'm'));
        // namespace and pod come from Prometheus' Kubernetes discovery; model from the server.
        expect(labels).toContain('model="sentiment_ensemble"');
        expect(exported).toContain(`${name}{model="sentiment_ensemble",version="1"}`);
      }
    }
  });

  it('--output-dir writes one file per object, the same documents as stdout', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-deploy-'));
    try {
      const printed = await run(['kubernetes', '--pod-monitor']);
      const written = await run(['kubernetes', '--pod-monitor', '--output-dir', dir]);
      expect(written.code).toBe(0);
      expect(readdirSync(dir).sort()).toEqual(['deployment.yaml', 'poddisruptionbudget.yaml', 'podmonitor.yaml', 'scaledobject.yaml', 'service.yaml']);
      const fromFiles = readdirSync(dir).map((f) => parseAllDocuments(readFileSync(path.join(dir, f), 'utf8')) as unknown as { toJS(): object }[]);
      const fromStdout = parseAllDocuments(printed.out) as unknown as { toJS(): { kind: string } }[];
      for (const docs of fromFiles) {
        expect(docs).toHaveLength(1);
        const doc = docs[0]!.toJS() as { kind: string };
        expect(fromStdout.map((d) => d.toJS()).find((d) => d.kind === doc.kind)).toEqual(doc);
      }
      expect(readFileSync(path.join(dir, 'deployment.yaml'), 'utf8')).toMatch(/^# Generated by: tritium deploy kubernetes --pod-monitor\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tritium deploy kserve', () => {
  it('puts the runtime on /mnt/models with KServe ports and the grace period on the predictor', () => {
    const manifests = render(['kserve', '--storage-uri', 's3://models/repo', '--name', 'sentiment', '--', '--exit-timeout-secs=20']);
    const runtime = find<ClusterServingRuntime>(manifests, 'ClusterServingRuntime');
    const isvc = find<InferenceService>(manifests, 'InferenceService');
    const c = runtime.spec.containers[0]!;
    expect(c.name).toBe('kserve-container');
    expect(c.args).toEqual(['serve', '--model-repository=/mnt/models', '--http-port=8080', '--grpc-port=9000', '--metrics-port=8002', '--exit-timeout-secs=20']);
    expect(c.ports!.map((p) => [p.name, p.containerPort])).toEqual([['http', 8080], ['grpc', 9000], ['metrics', 8002]]);
    expect(runtime.spec.protocolVersions).toEqual(['v2', 'grpc-v2']);
    expect(runtime.spec.supportedModelFormats.map((f) => f.name)).toEqual(['triton', 'onnx', 'python-like']);
    expect(isvc.spec.predictor.terminationGracePeriodSeconds).toBe(5 + 20 + 5);
    expect(isvc.spec.predictor.model).toEqual({ modelFormat: { name: 'triton', version: '2' }, runtime: 'tritium', protocolVersion: 'v2', storageUri: 's3://models/repo' });
    expect(isvc.metadata.annotations).toEqual({ 'serving.kserve.io/deploymentMode': 'Standard', 'serving.kserve.io/autoscalerClass': 'keda' });
    expect(isvc.spec.predictor.autoScaling!.metrics[0]!.external.metric.query).toBe(
      'sum(nv_inference_pending_request_count{namespace="default",pod=~"sentiment-predictor-[a-z0-9]+-[a-z0-9]+"})',
    );
  });
});

describe('tritium deploy refuses what a cluster could not run', () => {
  const REFUSED: [string[], string][] = [
    [[], 'missing target: kubernetes or kserve'],
    [['helm'], "unknown target 'helm' (expected kubernetes or kserve)"],
    [['kubernetes', '--nmae', 'x'], "unrecognized flag '--nmae'; did you mean '--name'?"],
    [['kubernetes', '--model-repository', 's3://b/r'], "unrecognized flag '--model-repository' (tritium serve flags go after --)"],
    [['kubernetes', 'extra'], "unexpected argument 'extra' (serve flags go after --)"],
    [['kubernetes', '--name', 'Tritium_1'], "invalid value for --name: 'Tritium_1'"],
    [['kubernetes', '--namespace', 'ML_team'], "invalid value for --namespace: 'ML_team'"],
    [['kubernetes', '--min-replicas', '0'], "invalid value for --min-replicas: '0' (expected an integer >= 1)"],
    [['kubernetes', '--min-replicas', '4', '--max-replicas', '3'], '--max-replicas (3) must be at least --min-replicas (4)'],
    [['kubernetes', '--autoscaler', 'vpa'], "invalid value for --autoscaler: 'vpa' (expected keda, hpa or none)"],
    [['kubernetes', '--memory', '4GB'], "invalid value for --memory: '4GB'"],
    [['kubernetes', '--prometheus-url', 'prometheus:9090'], "invalid value for --prometheus-url: 'prometheus:9090'"],
    [['kubernetes', '--', '--bogus'], "serve flags: unrecognized flag '--bogus'"],
    [['kubernetes', '--', '--exit-timeout-secs=-1'], "serve flags: invalid value for --exit-timeout-secs: '-1'"],
    [['kubernetes', '--', '--http-port=0'], '--http-port 0 picks a random port; a pod needs a fixed one'],
    [['kubernetes', '--', '--allow-http=false'], 'the probes use /v2/health/* over HTTP: --allow-http must stay true'],
    [['kubernetes', '--', '--allow-metrics=false'], '--autoscaler keda reads the metrics endpoint'],
    [['kubernetes', '--', '--model-repository=models'], "--model-repository 'models' must be an absolute path in the image or a URL"],
    [['kserve'], '--storage-uri is required for kserve'],
    [['kserve', '--storage-uri', 'bucket/path'], "invalid value for --storage-uri: 'bucket/path'"],
    [['kserve', '--storage-uri', 's3://b/r', '--', '--model-repository=/models'], '--model-repository is not a kserve flag: KServe mounts --storage-uri at /mnt/models'],
    [['kserve', '--storage-uri', 's3://b/r', '--autoscaler', 'hpa'], "--autoscaler hpa: KServe's HPA class scales on CPU and memory only"],
  ];
  it.each(REFUSED.map(([argv, message]) => [argv.join(' '), argv, message]))('%s', async (_, argv, message) => {
    const r = await run(argv as string[]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')[0]).toContain(`tritium deploy: ${message}`);
    expect(r.err).toContain('usage: tritium deploy');
  });

  it('--allow-metrics=false is accepted without an autoscaler', async () => {
    expect((await run(['kubernetes', '--autoscaler', 'none', '--', '--allow-metrics=false'])).code).toBe(0);
  });
});
