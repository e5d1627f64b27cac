/**
 * Plain Kubernetes: a Deployment of `tritium serve`, its Service, a PodDisruptionBudget, and an
 * autoscaler on Tritium's queue metrics (a KEDA ScaledObject, or an HPA through
 * prometheus-adapter), plus a prometheus-operator PodMonitor on request.
 * Typed with kubernetes-models' declarations, so a misspelt field does not compile.
 */
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IHorizontalPodAutoscalerBehavior } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscalerBehavior';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IService } from 'kubernetes-models/v1/Service';
import type { IScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import type { IPodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import type { DeployOptions } from './deploy-options.ts';
import { averageQueueTimeQuery, pendingRequestsQuery } from './autoscaling-queries.ts';
import {
  commonLabels,
  containerPorts,
  podSecurityContext,
  scrapeAnnotations,
  selectorLabels,
  terminationGracePeriodSeconds,
  tmpVolume,
  tritiumContainer,
} from './tritium-container.ts';

export type KubernetesManifest = IDeployment | IService | IPodDisruptionBudget | IScaledObject | IHorizontalPodAutoscaler | IPodMonitor;

function metadata(o: DeployOptions, name = o.name) {
  return { name, namespace: o.namespace, labels: commonLabels(o) };
}

export function deployment(o: DeployOptions): IDeployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(o),
    spec: {
      // With an autoscaler, it owns the replica count: a `replicas` here would reset it on every apply.
      ...(o.autoscaler === 'none' ? { replicas: o.minReplicas } : {}),
      selector: { matchLabels: selectorLabels(o) },
      // Never below the current capacity during a rollout: a new pod must be ready before an old one goes.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: commonLabels(o), annotations: scrapeAnnotations(o) },
        spec: {
          ...(o.serviceAccount ? { serviceAccountName: o.serviceAccount } : {}),
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: terminationGracePeriodSeconds(o),
          securityContext: podSecurityContext(),
          containers: [tritiumContainer(o, 'tritium')],
          volumes: [tmpVolume()],
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selectorLabels(o) } },
          ],
        },
      },
    },
  };
}

export function service(o: DeployOptions): IService {
  const ports = containerPorts(o);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(o),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(o),
      ports: [
        { name: 'http', port: ports.http, targetPort: 'http', protocol: 'TCP' },
        { name: 'grpc', port: ports.grpc, targetPort: 'grpc', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' },
        { name: 'metrics', port: ports.metrics, targetPort: 'metrics', protocol: 'TCP' },
      ],
    },
  };
}

/** One pod at a time may be evicted (node drains): never blocks a drain, never empties the Service at once. */
export function podDisruptionBudget(o: DeployOptions): IPodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: metadata(o),
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(o) } },
  };
}

/** Scale up at once, scale down one pod a minute after 5 min of calm: each leaving pod drains. */
export function scalingBehavior(): IHorizontalPodAutoscalerBehavior {
  return {
    scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] },
  };
}

export function scaledObject(o: DeployOptions): IScaledObject {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: metadata(o),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: o.name },
      minReplicaCount: o.minReplicas,
      maxReplicaCount: o.maxReplicas,
      pollingInterval: 15,
      advanced: { horizontalPodAutoscalerConfig: { behavior: scalingBehavior() } },
      triggers: [
        {
          type: 'prometheus',
          name: 'pending-requests',
          metricType: 'AverageValue',
          metadata: { serverAddress: o.prometheusUrl, query: pendingRequestsQuery(o, o.name), threshold: String(o.targetPendingRequests) },
        },
        {
          type: 'prometheus',
          name: 'queue-time-us',
          metricType: 'Value',
          metadata: { serverAddress: o.prometheusUrl, query: averageQueueTimeQuery(o, o.name), threshold: String(o.targetQueueMs * 1000) },
        },
      ],
    },
  };
}

/** The HPA alternative: the pending-requests gauge as a Pods metric, served by prometheus-adapter's default rules. */
export function horizontalPodAutoscaler(o: DeployOptions): IHorizontalPodAutoscaler {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: metadata(o),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: o.name },
      minReplicas: o.minReplicas,
      maxReplicas: o.maxReplicas,
      behavior: scalingBehavior(),
      metrics: [
        {
          type: 'Pods',
          pods: {
            metric: {
              name: 'nv_inference_pending_request_count',
              ...(o.scaleModel !== undefined ? { selector: { matchLabels: { model: o.scaleModel } } } : {}),
            },
            target: { type: 'AverageValue', averageValue: String(o.targetPendingRequests) },
          },
        },
      ],
    },
  };
}

export function podMonitor(o: DeployOptions, podSelector: Record<string, string>, name = o.name): IPodMonitor {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: metadata(o, name),
    spec: {
      selector: { matchLabels: podSelector },
      podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: '15s' }],
    },
  };
}

export function kubernetesManifests(o: DeployOptions): KubernetesManifest[] {
  const out: KubernetesManifest[] = [deployment(o), service(o), podDisruptionBudget(o)];
  if (o.autoscaler === 'keda') out.push(scaledObject(o));
  if (o.autoscaler === 'hpa') out.push(horizontalPodAutoscaler(o));
  if (o.podMonitor) out.push(podMonitor(o, selectorLabels(o)));
  return out;
}
