/**
 * The part of KServe's API that `tritium deploy kserve` writes. KServe publishes no TypeScript or
 * schema package, so these are written from its CRDs (serving.kserve.io, KServe v0.20.0); the
 * manifest-schema test checks every rendered object against the CRDs' own OpenAPI schemas
 * (deploy/schemas/), which is what catches a field misspelt here.
 */
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSecurityContext } from 'kubernetes-models/v1/PodSecurityContext';
import type { IVolume } from 'kubernetes-models/v1/Volume';

type IObjectMeta = NonNullable<IDeployment['metadata']>;

/** v1alpha1 SupportedModelFormat. */
export interface SupportedModelFormat {
  name: string;
  version?: string;
  autoSelect?: boolean;
  /** Only meaningful with autoSelect; KServe requires >= 1. */
  priority?: number;
}

export interface ClusterServingRuntime {
  apiVersion: 'serving.kserve.io/v1alpha1';
  kind: 'ClusterServingRuntime';
  metadata: IObjectMeta;
  spec: {
    /** Annotations KServe copies onto the predictor pods. */
    annotations?: Record<string, string>;
    supportedModelFormats: SupportedModelFormat[];
    /** `v1`, `v2`, `grpc-v1`, `grpc-v2`. */
    protocolVersions: string[];
    containers: IContainer[];
    volumes?: IVolume[];
  };
}

/** v1beta1 MetricTarget: KServe's KEDA integration reads `value` as the trigger's threshold. */
export interface MetricTarget {
  type: 'Utilization' | 'Value' | 'AverageValue';
  value?: string | number;
  averageValue?: string | number;
  averageUtilization?: number;
}

export interface ExternalMetricSource {
  metric: { backend: 'prometheus' | 'graphite'; serverAddress?: string; query: string; namespace?: string };
  target: MetricTarget;
}

export interface InferenceService {
  apiVersion: 'serving.kserve.io/v1beta1';
  kind: 'InferenceService';
  metadata: IObjectMeta;
  spec: {
    predictor: {
      minReplicas?: number;
      maxReplicas?: number;
      serviceAccountName?: string;
      terminationGracePeriodSeconds?: number;
      securityContext?: IPodSecurityContext;
      volumes?: IVolume[];
      autoScaling?: {
        metrics: Array<{ type: 'External'; external: ExternalMetricSource }>;
        behavior?: { scaleDown?: { stabilizationWindowSeconds?: number } };
      };
      model: {
        modelFormat: { name: string; version?: string };
        runtime?: string;
        protocolVersion?: 'v1' | 'v2' | 'grpc-v2';
        storageUri?: string;
      };
    };
  };
}
