/**
 * The Tritium container as Kubernetes runs it, shared by the plain Deployment and the KServe
 * runtime: Triton's health endpoints as probes, and a shutdown that fits the pod's grace period.
 *
 * Shutdown, in the order Kubernetes runs it: the pod is removed from the Service's endpoints
 * while the preStop hook sleeps (`preStopSleepSecs`), so no new request is routed to a pod
 * that would refuse it; then SIGTERM reaches `tritium serve`, which drops readiness, refuses new
 * requests, lets in-flight ones finish within `--exit-timeout-secs` and exits. The grace period
 * covers all of it, so the kubelet's SIGKILL never cuts a drain short.
 */
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSecurityContext } from 'kubernetes-models/v1/PodSecurityContext';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { DeployOptions } from './deploy-options.ts';

/** The image's non-root user (deploy/Containerfile creates it with this uid and gid). */
export const IMAGE_UID = 1000;

/** Past --exit-timeout-secs, `tritium serve` forces its exit after 2 s; 3 s more of slack for the process to end. */
export const EXIT_MARGIN_SECS = 5;

/** preStop sleep + the server's drain budget + its forced-exit margin. */
export function terminationGracePeriodSeconds(o: DeployOptions): number {
  return o.preStopSleepSecs + o.serve.exitTimeoutSecs + EXIT_MARGIN_SECS;
}

export function containerPorts(o: DeployOptions): { http: number; grpc: number; metrics: number } {
  return { http: o.serve.httpPort, grpc: o.serve.grpcPort, metrics: o.serve.metricsPort };
}

/** Labels every object carries; the selector uses the first two (immutable once applied). */
export function selectorLabels(o: DeployOptions): Record<string, string> {
  return { 'app.kubernetes.io/name': 'tritium', 'app.kubernetes.io/instance': o.name };
}

export function commonLabels(o: DeployOptions): Record<string, string> {
  return { ...selectorLabels(o), 'app.kubernetes.io/component': 'inference-server', 'app.kubernetes.io/managed-by': 'tritium-deploy' };
}

/** Pod annotations read by Prometheus' usual `kubernetes-pods` scrape job. */
export function scrapeAnnotations(o: DeployOptions): Record<string, string> {
  return { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(o.serve.metricsPort), 'prometheus.io/path': '/metrics' };
}

/** The container: `tritium serve` with the given flags (the image's entrypoint is `tini -- tritium`). */
export function tritiumContainer(o: DeployOptions, name: string): IContainer {
  const ports = containerPorts(o);
  // With --health-port the probes go to the health listener, which its own thread answers even
  // while the main thread is swamped (bench/overload.bench.ts: seconds on the HTTP port, ms there).
  const probePort = o.serve.healthPort !== undefined ? 'health' : 'http';
  // Both ports keep HTTP's policy: HTTPS with --http-use-ssl (kubelet does not verify the
  // certificate), the restricted header when `health` is restricted.
  const health = o.serve.httpRestrictedApi.health;
  const probe = (path: string) => ({
    path,
    port: probePort,
    ...(o.serve.httpSsl.useSsl ? { scheme: 'HTTPS' as const } : {}),
    ...(health ? { httpHeaders: [{ name: health.header, value: health.value }] } : {}),
  });
  return {
    name,
    image: o.image,
    args: ['serve', ...o.serveArgs],
    ports: [
      { name: 'http', containerPort: ports.http, protocol: 'TCP' },
      { name: 'grpc', containerPort: ports.grpc, protocol: 'TCP' },
      { name: 'metrics', containerPort: ports.metrics, protocol: 'TCP' },
      ...(o.serve.healthPort !== undefined ? [{ name: 'health', containerPort: o.serve.healthPort, protocol: 'TCP' as const }] : []),
    ],
    ...(o.envFromSecret ? { envFrom: [{ secretRef: { name: o.envFromSecret } }] } : {}),
    // Loading models can take minutes: the startup probe allows 10 min before liveness counts
    // (Triton's own charts probe /v2/health/ready at startup too).
    startupProbe: { httpGet: probe('/v2/health/ready'), periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 120 },
    readinessProbe: { httpGet: probe('/v2/health/ready'), periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 },
    // Restart only after a minute without an answer: a busy server is slow, not dead.
    livenessProbe: { httpGet: probe('/v2/health/live'), periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
    lifecycle: { preStop: { exec: { command: ['sleep', String(o.preStopSleepSecs)] } } },
    // No CPU limit: CFS throttling turns a busy batcher into latency spikes; memory is bounded.
    resources: { requests: { cpu: o.cpuRequest, memory: o.memory }, limits: { memory: o.memory } },
    // At the container level so that KServe's runtime (which has no pod securityContext) gets it too.
    securityContext: {
      runAsNonRoot: true,
      runAsUser: IMAGE_UID,
      runAsGroup: IMAGE_UID,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    // Transpiled model.ts bundles, worker scratch files and downloaded repositories live in /tmp.
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  };
}

export function tmpVolume(): IVolume {
  return { name: 'tmp', emptyDir: { sizeLimit: '4Gi' } };
}

/** Volumes (the /tmp emptyDir) belong to the image's group. */
export function podSecurityContext(): IPodSecurityContext {
  return { fsGroup: IMAGE_UID };
}
