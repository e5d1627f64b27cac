/**
 * What `tritium deploy` renders from: the deployment's own settings plus the `tritium serve`
 * flags the pods run with. The serve flags are parsed by `parseServeFlags` (the one parser of
 * serve flags), so ports, probes, the shutdown budget and the repository in the manifests are
 * the ones the server will actually use.
 */
import { parseServeFlags } from '../cli/flags.ts';
import { type ServeOptions } from '../cli/serve-options.ts';

export type DeployTarget = 'kubernetes' | 'kserve';
export type Autoscaler = 'keda' | 'hpa' | 'none';

export interface DeployOptions {
  readonly target: DeployTarget;
  /** Name of the Deployment/Service/... (kubernetes) or of the InferenceService (kserve). */
  readonly name: string;
  readonly namespace: string;
  readonly image: string;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly autoscaler: Autoscaler;
  /** Scale out when the pending requests per replica exceed this (nv_inference_pending_request_count). */
  readonly targetPendingRequests: number;
  /** Scale out when the average queue time per request exceeds this (nv_inference_queue_duration_us). */
  readonly targetQueueMs: number;
  /** Only this model's series feed the autoscaler (default: every model of the pod). */
  readonly scaleModel?: string;
  /** Prometheus that KEDA queries. */
  readonly prometheusUrl: string;
  /** Also emit a prometheus-operator PodMonitor. */
  readonly podMonitor: boolean;
  /** Seconds the preStop hook waits before SIGTERM, so endpoints stop routing to the pod first. */
  readonly preStopSleepSecs: number;
  readonly cpuRequest: string;
  readonly memory: string;
  /** A Secret whose keys become the container's environment (object-store credentials). */
  readonly envFromSecret?: string;
  readonly serviceAccount?: string;
  /** kserve: where KServe's storage initializer downloads the repository from (to /mnt/models). */
  readonly storageUri?: string;
  /** kserve: the ClusterServingRuntime's name. */
  readonly runtimeName: string;
  /** The `tritium serve` flags the pods run with (after the target's own defaults). */
  readonly serveArgs: readonly string[];
  /** `serveArgs` parsed by the server's own flag parser. */
  readonly serve: ServeOptions;
}

export class DeployOptionError extends Error {}

/** Where the image keeps the example repository (deploy/Containerfile). */
export const IMAGE_EXAMPLE_REPOSITORY = '/opt/tritium/model_repository';
/** Where KServe's storage initializer puts the storageUri's files. */
export const KSERVE_MODEL_DIR = '/mnt/models';
/** KServe's port conventions (its own Triton runtime: HTTP 8080, gRPC 9000; metrics stay on Triton's 8002). */
export const KSERVE_PORTS = { http: 8080, grpc: 9000, metrics: 8002 } as const;

/**
 * The port of the health listener the Kubernetes pods run (`--health-port`): probes go there, to a
 * thread of its own, so a flood of traffic on the HTTP port cannot starve them (bench/overload.bench.ts).
 */
export const HEALTH_PORT = 8003;

/** The serve flags each target starts from; the user's come after and may override them. */
export function baseServeArgs(target: DeployTarget): string[] {
  if (target === 'kserve') {
    return [
      `--model-repository=${KSERVE_MODEL_DIR}`,
      `--http-port=${KSERVE_PORTS.http}`,
      `--grpc-port=${KSERVE_PORTS.grpc}`,
      `--metrics-port=${KSERVE_PORTS.metrics}`,
    ];
  }
  return [`--health-port=${HEALTH_PORT}`];
}

// DNS-1035 label (Service names); 45 leaves room for KServe's `-predictor` and ReplicaSet suffixes.
const NAME = /^[a-z]([-a-z0-9]{0,43}[a-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// Kubernetes' quantity grammar (the pattern its OpenAPI schema gives resource.Quantity).
const QUANTITY = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;
const MODEL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

function check(ok: boolean, message: string): void {
  if (!ok) throw new DeployOptionError(message);
}

/** Checks the settings and parses the serve flags; throws DeployOptionError naming the flag and value. */
export function finishDeployOptions(o: Omit<DeployOptions, 'serve'>): DeployOptions {
  check(NAME.test(o.name), `invalid value for --name: '${o.name}' (expected a DNS-1035 label: a-z, 0-9 and '-', starting with a letter, at most 45 characters)`);
  check(NAMESPACE.test(o.namespace), `invalid value for --namespace: '${o.namespace}' (expected a DNS-1123 label)`);
  check(NAME.test(o.runtimeName), `invalid value for --runtime-name: '${o.runtimeName}' (expected a DNS-1035 label)`);
  check(o.image.length > 0 && !/\s/.test(o.image), `invalid value for --image: '${o.image}'`);
  check(o.minReplicas >= 1, `invalid value for --min-replicas: ${o.minReplicas} (expected at least 1)`);
  check(o.maxReplicas >= o.minReplicas, `--max-replicas (${o.maxReplicas}) must be at least --min-replicas (${o.minReplicas})`);
  check(QUANTITY.test(o.cpuRequest), `invalid value for --cpu: '${o.cpuRequest}' (expected a Kubernetes quantity such as 2 or 1500m)`);
  check(QUANTITY.test(o.memory), `invalid value for --memory: '${o.memory}' (expected a Kubernetes quantity such as 4Gi)`);
  check(o.scaleModel === undefined || MODEL_NAME.test(o.scaleModel), `invalid value for --scale-model: '${o.scaleModel}'`);
  check(/^https?:\/\/[^\s"'\\]+$/.test(o.prometheusUrl), `invalid value for --prometheus-url: '${o.prometheusUrl}' (expected http(s)://host:port)`);
  for (const [flag, v] of [['--env-from-secret', o.envFromSecret], ['--service-account', o.serviceAccount]] as const) {
    check(v === undefined || /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(v), `invalid value for ${flag}: '${v}' (expected a DNS-1123 subdomain)`);
  }
  if (o.target === 'kserve') {
    check(o.storageUri !== undefined, '--storage-uri is required for kserve (the repository KServe downloads to /mnt/models, e.g. s3://bucket/model_repository)');
  }
  check(o.storageUri === undefined || /^[a-z0-9]+:\/\/\S+$/.test(o.storageUri), `invalid value for --storage-uri: '${o.storageUri}' (expected a URI such as s3://bucket/path)`);

  const userRepos = o.serveArgs.some((a) => /^--(model-repository|model-store)(=|$)/.test(a));
  if (o.target === 'kserve') {
    check(!userRepos, `--model-repository is not a kserve flag: KServe mounts --storage-uri at ${KSERVE_MODEL_DIR}`);
  }
  const args = [...baseServeArgs(o.target), ...o.serveArgs];
  if (o.target === 'kubernetes' && !userRepos) args.unshift(`--model-repository=${IMAGE_EXAMPLE_REPOSITORY}`);
  let serve: ServeOptions;
  try {
    serve = parseServeFlags(args);
  } catch (e) {
    throw new DeployOptionError(`serve flags: ${(e as Error).message}`);
  }
  for (const repo of serve.modelRepositories) {
    check(repo.startsWith('/') || /^[a-z0-9]+:\/\//.test(repo), `--model-repository '${repo}' must be an absolute path in the image or a URL (s3://, gs://, as://)`);
  }
  check(serve.allowHttp, 'the probes use /v2/health/* over HTTP: --allow-http must stay true');
  check(serve.allowMetrics || o.autoscaler === 'none', `--autoscaler ${o.autoscaler} reads the metrics endpoint: --allow-metrics must stay true (or use --autoscaler none)`);
  for (const [flag, p] of [['http-port', serve.httpPort], ['grpc-port', serve.grpcPort], ['metrics-port', serve.metricsPort], ['health-port', serve.healthPort]] as const) {
    check(p !== 0, `--${flag} 0 picks a random port; a pod needs a fixed one`);
  }
  return { ...o, serveArgs: args, serve };
}
