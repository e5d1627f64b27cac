/**
 * tritonserver flags that `tritium serve` accepts so a deployment written for Triton (a Helm chart, a
 * Kubernetes manifest, a launch script) starts unchanged, but that change nothing here. Each value is
 * checked as Triton checks it (a bool, an integer, `<int>:<int>`, ...), and the server logs one
 * warning per flag given, naming it and why it has no effect. A value asking for something Tritium
 * does not do at all (`--allow-sagemaker=true`) is refused instead: starting without it would be a
 * silent surprise. The list is tritonserver's command_line_parser.cc less the flags Tritium
 * implements (flags.ts).
 */

export type FlagValueKind = 'bool' | 'int' | 'float' | 'string' | 'int:int' | 'int:float' | 'int-int' | 'policy';

export interface FlagWithoutEffect {
  readonly kind: FlagValueKind;
  /** Why it changes nothing here (the warning's end). */
  readonly why: string;
  /** For bool flags: `true` is refused with this message (the feature does not exist in Tritium). */
  readonly refuseTrue?: string;
}

const GPU = 'Tritium runs no CUDA memory of its own (its ONNX Runtime backend runs on CPU; TensorRT engines manage theirs)';
const THREADS = "Node's event loop serves every connection; compute runs in the models' own workers (instance_group count)";
const SAGEMAKER = 'the SageMaker endpoints are not served by Tritium';
const VERTEX = 'the Vertex AI endpoints are not served by Tritium';

export const TRITON_FLAGS_WITHOUT_EFFECT: Readonly<Record<string, FlagWithoutEffect>> = {
  'allow-gpu-metrics': { kind: 'bool', why: 'there are no GPU metrics to export' },
  'allow-cpu-metrics': { kind: 'bool', why: 'nv_cpu_utilization and the nv_cpu_memory_* gauges are always exported with --allow-metrics' },
  'metrics-interval-ms': { kind: 'float', why: 'CPU metrics are read when /metrics is scraped' },
  'allow-sagemaker': { kind: 'bool', why: SAGEMAKER, refuseTrue: SAGEMAKER },
  'sagemaker-port': { kind: 'int', why: SAGEMAKER },
  'sagemaker-safe-port-range': { kind: 'int-int', why: SAGEMAKER },
  'sagemaker-thread-count': { kind: 'int', why: SAGEMAKER },
  'allow-vertex-ai': { kind: 'bool', why: VERTEX, refuseTrue: VERTEX },
  'vertex-ai-port': { kind: 'int', why: VERTEX },
  'vertex-ai-thread-count': { kind: 'int', why: VERTEX },
  'vertex-ai-default-model': { kind: 'string', why: VERTEX },
  'reuse-http-port': { kind: 'bool', why: 'the HTTP port is not shared', refuseTrue: 'a port is not shared between servers: run one tritium serve per port' },
  'reuse-grpc-port': { kind: 'bool', why: 'the gRPC port is not shared', refuseTrue: 'a port is not shared between servers: run one tritium serve per port' },
  'http-thread-count': { kind: 'int', why: THREADS },
  'grpc-infer-thread-count': { kind: 'int', why: THREADS },
  'grpc-infer-allocation-pool-size': { kind: 'int', why: 'gRPC messages are not pooled' },
  'grpc-max-response-pool-size': { kind: 'int', why: 'gRPC responses are not pooled' },
  'grpc-infer-response-compression-level': { kind: 'string', why: 'gRPC responses are sent uncompressed' },
  'grpc-keepalive-permit-without-calls': { kind: 'bool', why: "grpc-js servers accept clients' keepalive pings without calls" },
  'grpc-http2-max-pings-without-data': { kind: 'int', why: 'grpc-js servers do not limit pings without data' },
  'grpc-http2-min-recv-ping-interval-without-data': { kind: 'int', why: 'grpc-js servers do not limit the ping interval' },
  'grpc-http2-max-ping-strikes': { kind: 'int', why: 'grpc-js servers do not count ping strikes' },
  'pinned-memory-pool-byte-size': { kind: 'int', why: GPU },
  'cuda-memory-pool-byte-size': { kind: 'int:int', why: GPU },
  'cuda-virtual-address-size': { kind: 'int:int', why: GPU },
  'enable-peer-access': { kind: 'bool', why: GPU },
  'min-supported-compute-capability': { kind: 'float', why: GPU },
  'model-load-gpu-limit': { kind: 'int:float', why: GPU },
  'buffer-manager-thread-count': { kind: 'int', why: 'tensors are not copied through a buffer manager' },
  'backend-directory': { kind: 'string', why: 'backends are packages bound into the server, not shared libraries' },
  'repoagent-directory': { kind: 'string', why: 'repository agents are not supported' },
  'cache-directory': { kind: 'string', why: 'only the built-in local cache exists (--cache-config local,size=<bytes>)' },
  'host-policy': { kind: 'policy', why: 'host policies (NUMA node, CPU cores) are not applied; use the container runtime' },
};

const PATTERNS: Readonly<Record<Exclude<FlagValueKind, 'bool' | 'string'>, { re: RegExp; shape: string }>> = {
  int: { re: /^-?\d+$/, shape: 'an integer' },
  float: { re: /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i, shape: 'a number' },
  'int:int': { re: /^-?\d+:-?\d+$/, shape: '<integer>:<integer>' },
  'int:float': { re: /^-?\d+:-?(\d+\.?\d*|\.\d+)$/, shape: '<integer>:<fraction>' },
  'int-int': { re: /^\d+-\d+$/, shape: '<integer>-<integer>' },
  policy: { re: /^[^,=]+,[^,=]+=.*$/, shape: '<policy_name>,<setting>=<value>' },
};

/**
 * Checks the value of a flag from the table (bool flags arrive parsed): throws `Error` with the
 * message naming the flag when it is malformed or asks for what Tritium does not do.
 */
export function checkFlagWithoutEffect(name: string, spec: FlagWithoutEffect, value: string | boolean): void {
  if (typeof value === 'boolean') {
    if (value && spec.refuseTrue) throw new Error(`--${name}=true: ${spec.refuseTrue}`);
    return;
  }
  if (spec.kind === 'string' || spec.kind === 'bool') return;
  const { re, shape } = PATTERNS[spec.kind];
  if (!re.test(value)) throw new Error(`invalid value for --${name}: '${value}' (expected ${shape})`);
}
