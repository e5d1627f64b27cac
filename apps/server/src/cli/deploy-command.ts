/**
 * `tritium deploy kubernetes|kserve [options] [-- <tritium serve flags>]`: prints the manifests
 * that run Tritium on a cluster (or writes one file per object with --output-dir). The serve
 * flags after `--` are the pods' own; probes, ports, the grace period and the autoscaling
 * queries are derived from them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { nearestName } from '@tritium/core/config';
import { DeployOptionError, finishDeployOptions, type Autoscaler, type DeployOptions, type DeployTarget } from '../deploy/deploy-options.ts';
import { kserveManifests } from '../deploy/kserve-manifests.ts';
import { kubernetesManifests } from '../deploy/kubernetes-manifests.ts';
import { renderManifests, renderStream } from '../deploy/manifest-yaml.ts';
import { tritiumVersion } from './main.ts';

export interface DeployCommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export const DEPLOY_USAGE = `usage: tritium deploy kubernetes|kserve [options] [-- <tritium serve flags>]

Prints Kubernetes manifests for Tritium (docs/kubernetes.md walks through them):
  kubernetes  Deployment, Service, PodDisruptionBudget, autoscaler (KEDA ScaledObject or HPA)
  kserve      ClusterServingRuntime and an InferenceService (KServe Standard mode, KEDA)

options:
  --name <name>                    objects' name (default tritium)
  --namespace <ns>                 (default default)
  --image <image>                  (default tritium:<version>, as deploy/container/build-and-run.sh tags it)
  --min-replicas <n> --max-replicas <n>   (default 2 and 8)
  --autoscaler keda|hpa|none       (default keda; hpa needs prometheus-adapter; kserve: keda or none)
  --target-pending-requests <n>    pending requests per replica that trigger a scale-out (default 8)
  --target-queue-ms <n>            average queue time that triggers a scale-out (default 100; keda, kubernetes)
  --scale-model <model>            scale on this model's metrics only (default: every model)
  --prometheus-url <url>           Prometheus KEDA queries (default http://prometheus-operated.monitoring.svc:9090)
  --pod-monitor                    also a prometheus-operator PodMonitor
  --pre-stop-sleep-secs <n>        wait before SIGTERM so endpoints drop the pod first (default 5)
  --cpu <quantity> --memory <quantity>    requests (memory is also the limit; default 2 and 4Gi)
  --env-from-secret <secret>       environment from a Secret (object-store credentials)
  --service-account <name>         pods' service account (kserve: the one holding the S3 secret)
  --storage-uri <uri>              kserve: the model repository KServe downloads to /mnt/models
  --runtime-name <name>            kserve: the ClusterServingRuntime's name (default tritium)
  --output-dir <dir>               write <kind>.yaml per object instead of printing them

serve flags after -- (kubernetes default: --model-repository=/opt/tritium/model_repository, the
example in the image), e.g. -- --model-repository=s3://bucket/repo --model-control-mode=poll
`;

const OPTIONS = {
  name: { type: 'string' },
  namespace: { type: 'string' },
  image: { type: 'string' },
  'min-replicas': { type: 'string' },
  'max-replicas': { type: 'string' },
  autoscaler: { type: 'string' },
  'target-pending-requests': { type: 'string' },
  'target-queue-ms': { type: 'string' },
  'scale-model': { type: 'string' },
  'prometheus-url': { type: 'string' },
  'pod-monitor': { type: 'boolean' },
  'pre-stop-sleep-secs': { type: 'string' },
  cpu: { type: 'string' },
  memory: { type: 'string' },
  'env-from-secret': { type: 'string' },
  'service-account': { type: 'string' },
  'storage-uri': { type: 'string' },
  'runtime-name': { type: 'string' },
  'output-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function int(flag: string, v: string | undefined, fallback: number, min: number): number {
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
    throw new DeployOptionError(`invalid value for --${flag}: '${v}' (expected an integer >= ${min})`);
  }
  return Number(v);
}

/** Parses the command line into options (throws DeployOptionError naming the flag). */
export function parseDeployArgs(args: readonly string[], version = tritiumVersion()): { options: DeployOptions; outputDir?: string } | 'help' {
  const dashdash = args.indexOf('--');
  const own = dashdash < 0 ? args : args.slice(0, dashdash);
  const serveArgs = dashdash < 0 ? [] : args.slice(dashdash + 1);
  let parsed;
  try {
    parsed = parseArgs({ args: [...own], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    const unknown = /^Unknown option '(--?[^']*)'/.exec((e as Error).message)?.[1];
    if (unknown === undefined) throw new DeployOptionError((e as Error).message);
    const guess = nearestName(Object.keys(OPTIONS), unknown.replace(/^-+/, ''));
    throw new DeployOptionError(`unrecognized flag '${unknown}'${guess ? `; did you mean '--${guess}'?` : ''} (tritium serve flags go after --)`);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  const [target, ...extra] = parsed.positionals;
  if (target !== 'kubernetes' && target !== 'kserve') {
    throw new DeployOptionError(target === undefined ? 'missing target: kubernetes or kserve' : `unknown target '${target}' (expected kubernetes or kserve)`);
  }
  if (extra.length) throw new DeployOptionError(`unexpected argument '${extra[0]}' (serve flags go after --)`);
  const autoscaler = v.autoscaler ?? 'keda';
  if (autoscaler !== 'keda' && autoscaler !== 'hpa' && autoscaler !== 'none') {
    throw new DeployOptionError(`invalid value for --autoscaler: '${autoscaler}' (expected keda, hpa or none)`);
  }
  const options = finishDeployOptions({
    target: target as DeployTarget,
    name: v.name ?? 'tritium',
    namespace: v.namespace ?? 'default',
    image: v.image ?? `tritium:${version}`,
    minReplicas: int('min-replicas', v['min-replicas'], 2, 1),
    maxReplicas: int('max-replicas', v['max-replicas'], Math.max(8, int('min-replicas', v['min-replicas'], 2, 1)), 1),
    autoscaler: autoscaler as Autoscaler,
    targetPendingRequests: int('target-pending-requests', v['target-pending-requests'], 8, 1),
    targetQueueMs: int('target-queue-ms', v['target-queue-ms'], 100, 1),
    ...(v['scale-model'] !== undefined ? { scaleModel: v['scale-model'] } : {}),
    prometheusUrl: v['prometheus-url'] ?? 'http://prometheus-operated.monitoring.svc:9090',
    podMonitor: v['pod-monitor'] ?? false,
    preStopSleepSecs: int('pre-stop-sleep-secs', v['pre-stop-sleep-secs'], 5, 0),
    cpuRequest: v.cpu ?? '2',
    memory: v.memory ?? '4Gi',
    ...(v['env-from-secret'] !== undefined ? { envFromSecret: v['env-from-secret'] } : {}),
    ...(v['service-account'] !== undefined ? { serviceAccount: v['service-account'] } : {}),
    ...(v['storage-uri'] !== undefined ? { storageUri: v['storage-uri'] } : {}),
    runtimeName: v['runtime-name'] ?? 'tritium',
    serveArgs,
  });
  return { options, ...(v['output-dir'] !== undefined ? { outputDir: v['output-dir'] } : {}) };
}

/** The manifests for the options' target. */
export function deployManifests(o: DeployOptions): object[] {
  return o.target === 'kserve' ? kserveManifests(o) : kubernetesManifests(o);
}

/** The header every rendered file starts with: the command that regenerates it. */
export function deployHeader(args: readonly string[]): string {
  const shown = args.filter((a, i) => !(a === '--output-dir' || a.startsWith('--output-dir=') || args[i - 1] === '--output-dir'));
  return (
    ` Generated by: tritium deploy ${shown.join(' ')}\n` +
    ` Regenerate instead of editing: probes, ports, the grace period and the autoscaling queries\n` +
    ` follow the serve flags. docs/kubernetes.md explains each part.`
  );
}

export async function deployCommand(args: string[], io: DeployCommandIo = process): Promise<number> {
  let parsed;
  try {
    parsed = parseDeployArgs(args);
    if (parsed === 'help') {
      io.stdout.write(DEPLOY_USAGE);
      return 0;
    }
    const { options, outputDir } = parsed;
    const manifests = deployManifests(options);
    const header = deployHeader(args);
    if (outputDir === undefined) {
      io.stdout.write(renderStream(manifests, options, header));
      return 0;
    }
    mkdirSync(outputDir, { recursive: true });
    for (const m of renderManifests(manifests, options, header)) {
      const file = path.join(outputDir, `${m.kind.toLowerCase()}.yaml`);
      writeFileSync(file, m.yaml);
      io.stderr.write(`wrote ${file}\n`);
    }
    return 0;
  } catch (e) {
    if (e instanceof DeployOptionError) {
      io.stderr.write(`tritium deploy: ${e.message}\n${DEPLOY_USAGE}`);
      return 2;
    }
    throw e;
  }
}
