/**
 * KServe: a ClusterServingRuntime that runs `tritium serve` over the repository KServe's storage
 * initializer downloads to /mnt/models, and an InferenceService on it, in KServe's Standard
 * (raw Deployment) mode, autoscaled by KEDA on the pending-requests signal.
 */
import { pendingRequestsQuery } from './autoscaling-queries.ts';
import { DeployOptionError, type DeployOptions } from './deploy-options.ts';
import type { ClusterServingRuntime, InferenceService } from './kserve-types.ts';
import { podMonitor, type KubernetesManifest } from './kubernetes-manifests.ts';
import { commonLabels, podSecurityContext, terminationGracePeriodSeconds, tmpVolume, tritiumContainer } from './tritium-container.ts';

export type KServeManifest = ClusterServingRuntime | InferenceService | KubernetesManifest;

/**
 * What the runtime serves: a Triton repository (`triton`, as KServe's Triton runtime names it),
 * ONNX models and sandboxed model.ts preprocessing (`python-like`). Only `python-like` is
 * auto-selected: `triton` and `onnx` are KServe's Triton runtime's too, so an InferenceService
 * picks Tritium for them by naming `runtime:`.
 */
export const MODEL_FORMATS = [
  { name: 'triton', version: '2', autoSelect: false },
  { name: 'onnx', version: '1', autoSelect: false },
  { name: 'python-like', version: '1', autoSelect: true, priority: 1 },
] as const;

/** The Deployment KServe's Standard mode creates for an InferenceService's predictor. */
export const predictorName = (o: DeployOptions) => `${o.name}-predictor`;

export function clusterServingRuntime(o: DeployOptions): ClusterServingRuntime {
  return {
    apiVersion: 'serving.kserve.io/v1alpha1',
    kind: 'ClusterServingRuntime',
    metadata: { name: o.runtimeName, labels: { 'app.kubernetes.io/name': 'tritium', 'app.kubernetes.io/managed-by': 'tritium-deploy' } },
    spec: {
      annotations: { 'prometheus.kserve.io/port': String(o.serve.metricsPort), 'prometheus.kserve.io/path': '/metrics' },
      supportedModelFormats: MODEL_FORMATS.map((f) => ({ ...f })),
      protocolVersions: ['v2', 'grpc-v2'],
      containers: [tritiumContainer(o, 'kserve-container')],
      volumes: [tmpVolume()],
    },
  };
}

export function inferenceService(o: DeployOptions): InferenceService {
  if (o.autoscaler === 'hpa') {
    throw new DeployOptionError('--autoscaler hpa: KServe\'s HPA class scales on CPU and memory only; use keda (the queue metrics) or none');
  }
  return {
    apiVersion: 'serving.kserve.io/v1beta1',
    kind: 'InferenceService',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: commonLabels(o),
      annotations: {
        'serving.kserve.io/deploymentMode': 'Standard',
        'serving.kserve.io/autoscalerClass': o.autoscaler,
      },
    },
    spec: {
      predictor: {
        minReplicas: o.minReplicas,
        maxReplicas: o.maxReplicas,
        ...(o.serviceAccount ? { serviceAccountName: o.serviceAccount } : {}),
        // Must cover the runtime's preStop sleep and --exit-timeout-secs (rendered from the same flags).
        terminationGracePeriodSeconds: terminationGracePeriodSeconds(o),
        securityContext: podSecurityContext(),
        ...(o.autoscaler === 'keda'
          ? {
              autoScaling: {
                metrics: [
                  {
                    type: 'External' as const,
                    external: {
                      metric: { backend: 'prometheus' as const, serverAddress: o.prometheusUrl, query: pendingRequestsQuery(o, predictorName(o)) },
                      // KServe hands this to KEDA as the threshold per replica (AverageValue).
                      target: { type: 'Value' as const, value: String(o.targetPendingRequests) },
                    },
                  },
                ],
                behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
              },
            }
          : {}),
        model: {
          modelFormat: { name: 'triton', version: '2' },
          runtime: o.runtimeName,
          protocolVersion: 'v2',
          storageUri: o.storageUri,
        },
      },
    },
  };
}

export function kserveManifests(o: DeployOptions): KServeManifest[] {
  const out: KServeManifest[] = [clusterServingRuntime(o), inferenceService(o)];
  if (o.podMonitor) out.push(podMonitor(o, { 'serving.kserve.io/inferenceservice': o.name }, predictorName(o)));
  return out;
}
