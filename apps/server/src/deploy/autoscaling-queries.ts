/**
 * The autoscaling signal, as PromQL over the metrics Tritium exports under Triton's names
 * (apps/server/src/metrics/prometheus.ts):
 *
 * - `nv_inference_pending_request_count` (gauge): requests accepted and not yet executing, per
 *   model. Summed over the pods it is the backlog; divided by the replicas (KEDA's and the HPA's
 *   AverageValue) it is the backlog per replica: the saturation signal, it rises the moment
 *   requests arrive faster than the instances drain them.
 * - `nv_inference_queue_duration_us` / `nv_inference_request_success` (counters): the average time
 *   a successful request waited in a queue over the last minute, the latency a client feels from
 *   overload (Triton's own Kubernetes chart scales on this ratio). Only successful requests add
 *   queue time, so the ratio divides by them.
 *
 * Series are selected by `namespace` and `pod`, the labels Prometheus' Kubernetes service
 * discovery attaches (PodMonitor and the usual `kubernetes-pods` job both do).
 */
import type { DeployOptions } from './deploy-options.ts';

/** PromQL string literal: backslashes and double quotes escaped. */
const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Pods of a Deployment are `<deployment>-<replicaset hash>-<pod hash>`. */
export function podPattern(deploymentName: string): string {
  return `${deploymentName}-[a-z0-9]+-[a-z0-9]+`;
}

function selector(o: DeployOptions, deploymentName: string): string {
  const parts = [`namespace=${quote(o.namespace)}`, `pod=~${quote(podPattern(deploymentName))}`];
  if (o.scaleModel !== undefined) parts.push(`model=${quote(o.scaleModel)}`);
  return `{${parts.join(',')}}`;
}

/** Total pending requests over the deployment's pods (compared per replica: AverageValue). */
export function pendingRequestsQuery(o: DeployOptions, deploymentName: string): string {
  return `sum(nv_inference_pending_request_count${selector(o, deploymentName)})`;
}

/** Average queue time per successful request over the last minute, in microseconds (compared as a Value). */
export function averageQueueTimeQuery(o: DeployOptions, deploymentName: string): string {
  const s = selector(o, deploymentName);
  return (
    `sum(increase(nv_inference_queue_duration_us${s}[1m])) / ` +
    `clamp_min(sum(increase(nv_inference_request_success${s}[1m])), 1)`
  );
}
