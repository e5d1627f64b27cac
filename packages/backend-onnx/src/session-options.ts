/**
 * Triton's onnxruntime model settings → onnxruntime-node session and run options: `parameters`
 * (thread counts, execution mode, memory arena/pattern, arena shrinkage, device allocator for
 * initializers), `optimization.graph.level`, and the execution providers for an instance's kind
 * (`optimization.execution_accelerators`). The result is plain data, handed to the worker.
 */
import { availableParallelism } from 'node:os';
import { InferError, type Logger, type ModelConfig } from '@tritium/core';
import { type InstanceSpec } from '@tritium/core/backend';
import { gpuSupport, type GpuSupport } from './gpu.ts';

/** Plain-data subset of ort's InferenceSession.SessionOptions that Tritium sets. */
export interface OrtSessionOptions {
  intraOpNumThreads?: number;
  interOpNumThreads?: number;
  executionMode?: 'sequential' | 'parallel';
  enableCpuMemArena?: boolean;
  enableMemPattern?: boolean;
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
  executionProviders?: (string | { name: string; deviceId?: number; [key: string]: unknown })[];
  /** 0 verbose … 4 fatal. */
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
  extra?: Record<string, unknown>;
}

export interface OrtRunOptions {
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
  extra?: Record<string, unknown>;
}

function parameter(config: ModelConfig, key: string): string | undefined {
  return config.parameters?.[key]?.string_value;
}

function intParameter(config: ModelConfig, key: string): number | undefined {
  const raw = parameter(config, key);
  if (raw === undefined) return undefined;
  const value = Number(raw.trim());
  if (raw.trim() === '' || !Number.isInteger(value)) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be an integer, got '${raw}'`);
  }
  return value;
}

/**
 * Beyond Triton: the most threads one ONNX Runtime pool may ask for. ORT starts them with each
 * session (per instance), and the load API takes the config from any client: 100000 meant 100000
 * OS threads per instance.
 */
export const MAX_ORT_THREADS = 1024;

function threadCount(config: ModelConfig, key: string): number | undefined {
  const value = intParameter(config, key);
  if (value !== undefined && value > MAX_ORT_THREADS) {
    throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be at most ${MAX_ORT_THREADS}, got ${value}`);
  }
  return value;
}

function boolParameter(config: ModelConfig, key: string): boolean | undefined {
  const raw = parameter(config, key);
  if (raw === undefined) return undefined;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(v)) return true;
  if (['0', 'false', 'off', 'no'].includes(v)) return false;
  throw new InferError('INVALID_ARG', `model '${config.name}': parameter '${key}' must be a boolean, got '${raw}'`);
}

/** Key segments that would reach an object's prototype instead of a property of its own. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Sets a dotted ORT config key (`session.intra_op.allow_spinning`) in onnxruntime-node's nested
 * `extra` form. Only own properties are walked and a `__proto__` / `constructor` / `prototype`
 * segment is refused: the parameters come from the config, which the load API takes from any client,
 * and a walk that followed `session.__proto__.x` would set `x` on every object of the server's main thread.
 */
function setEntry(extra: Record<string, unknown>, key: string, value: string, model = ''): Record<string, unknown> {
  const parts = key.split('.');
  if (parts.some((p) => PROTOTYPE_KEYS.has(p))) {
    throw new InferError('INVALID_ARG', `model '${model}': parameter '${key}' is not an ONNX Runtime session config key`);
  }
  let node = extra;
  for (const part of parts.slice(0, -1)) {
    const next = Object.hasOwn(node, part) ? node[part] : undefined;
    node = node[part] = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : {};
  }
  node[parts[parts.length - 1]!] = value;
  return extra;
}

/**
 * The `session.*` config entries passed on to ONNX Runtime: its documented keys
 * (onnxruntime_session_options_config_keys.h) that change how a session computes, nothing else.
 * The config comes from the load API too, from any client that reaches it, so an unknown key is
 * refused rather than handed to ORT, which would act on whatever a later version means by it.
 */
const SESSION_CONFIG_KEYS = new Set([
  'session.disable_prepacking',
  'session.use_env_allocators',
  'session.load_model_format',
  'session.save_model_format',
  'session.set_denormal_as_zero',
  'session.disable_quant_qdq',
  'session.enable_quant_qdq',
  'session.disable_double_qdq_remover',
  'session.enable_quant_qdq_cleanup',
  'session.disable_aot_function_inlining',
  'session.use_device_allocator_for_initializers',
  'session.inter_op.allow_spinning',
  'session.intra_op.allow_spinning',
  'session.qdqisint8allowed',
  'session.x64quantprecision',
  'session.dynamic_block_base',
  'session.force_spinning_stop',
  'session.strict_shape_type_inference',
  'session.allow_released_opsets_only',
  'session.intra_op_thread_affinities',
  'session.disable_cpu_ep_fallback',
  'session.qdq_matmulnbits_accuracy_level',
  'session.record_ep_graph_assignment_info',
  'session.graph_optimizations_loop_level',
]);

/**
 * ORT keys that name a file ORT then writes or reads, anywhere the server's user may:
 * `session.collect_node_memory_stats_to_file: "/any/path"` made ORT create or overwrite that file
 * on the first run, from a load-API config override alone. Refused with their own reason.
 */
const FILE_SESSION_CONFIG_KEYS = new Set([
  'session.collect_node_memory_stats_to_file',
  'session.debug_layout_transformation',
  'session.node_partition_config_file',
  'session.model_external_initializers_file_folder_path',
  'session.optimized_model_external_initializers_file_name',
  'session.save_external_prepacked_constant_initializers',
  'session.resource_cuda_partitioning_settings',
  'session.layer_assignment_settings',
]);

function checkSessionConfigKey(key: string, model: string): void {
  if (FILE_SESSION_CONFIG_KEYS.has(key)) {
    throw new InferError('INVALID_ARG', `model '${model}': parameter '${key}' is refused: it makes ONNX Runtime write or read files outside the model`);
  }
  if (!SESSION_CONFIG_KEYS.has(key)) {
    throw new InferError(
      'INVALID_ARG',
      `model '${model}': parameter '${key}' is not an ONNX Runtime session config key this server passes on (known: ${[...SESSION_CONFIG_KEYS].join(', ')})`,
    );
  }
}

/** Total instances the config asks for (each group's count, at least 1). */
export function instanceCount(config: ModelConfig): number {
  const groups = config.instance_group ?? [];
  if (groups.length === 0) return 1;
  return groups.reduce((n, g) => n + Math.max(1, g.count ?? 1), 0);
}

/** Session/run options shared by every instance of the model (everything but the providers). */
export function modelSessionOptions(config: ModelConfig, cores = availableParallelism()): { session: OrtSessionOptions; run: OrtRunOptions } {
  // Failures come back as InferErrors naming the model; ORT's own stderr lines would only duplicate them.
  const session: OrtSessionOptions = { logSeverityLevel: 4 };
  // Instances run side by side: by default split the cores between them so they do not oversubscribe.
  session.intraOpNumThreads = threadCount(config, 'intra_op_thread_count') || Math.max(1, Math.floor(cores / instanceCount(config)));
  const inter = threadCount(config, 'inter_op_thread_count');
  if (inter !== undefined && inter > 0) session.interOpNumThreads = inter;
  const mode = intParameter(config, 'execution_mode');
  if (mode !== undefined) {
    if (mode !== 0 && mode !== 1) {
      throw new InferError('INVALID_ARG', `model '${config.name}': parameter 'execution_mode' must be 0 (sequential) or 1 (parallel), got ${mode}`);
    }
    session.executionMode = mode === 1 ? 'parallel' : 'sequential';
  }
  const arena = boolParameter(config, 'enable_mem_arena');
  if (arena !== undefined) session.enableCpuMemArena = arena;
  const pattern = boolParameter(config, 'enable_mem_pattern');
  if (pattern !== undefined) session.enableMemPattern = pattern;
  const deviceAllocator = boolParameter(config, 'session.use_device_allocator_for_initializers');
  // Other known `session.*` parameters pass through as ORT session config entries
  // (e.g. `session.intra_op.allow_spinning: "0"`); any other is refused (checkSessionConfigKey).
  for (const [key, value] of Object.entries(config.parameters ?? {})) {
    if (key.startsWith('session.') && key !== 'session.use_device_allocator_for_initializers') {
      checkSessionConfigKey(key, config.name);
      session.extra = setEntry(session.extra ?? {}, key, value.string_value, config.name);
    }
  }
  // ORT's intra-op threads spin between runs by default. Here every run is followed by a hand-off
  // to the server's main thread, which the spinning threads starve when they hold every core (the
  // default thread count): measured 3-6x slower on a loaded 2-core host. Off unless the config says
  // `session.intra_op.allow_spinning: "1"`.
  if (config.parameters?.['session.intra_op.allow_spinning'] === undefined) {
    session.extra = setEntry(session.extra ?? {}, 'session.intra_op.allow_spinning', '0');
  }
  if (deviceAllocator !== undefined) {
    session.extra = setEntry(session.extra ?? {}, 'session.use_device_allocator_for_initializers', deviceAllocator ? '1' : '0');
  }
  // Triton: -1 basic, 1 extended, 2 disabled; anything else (default) enables all.
  const level = config.optimization?.graph?.level;
  session.graphOptimizationLevel = level === -1 ? 'basic' : level === 1 ? 'extended' : level === 2 ? 'disabled' : 'all';
  const run: OrtRunOptions = { logSeverityLevel: 4 };
  const shrink = parameter(config, 'memory.enable_memory_arena_shrinkage');
  if (shrink !== undefined && shrink !== '') run.extra = { memory: { enable_memory_arena_shrinkage: shrink } };
  return { session, run };
}

export interface ProviderChoice {
  readonly executionProviders: NonNullable<OrtSessionOptions['executionProviders']>;
  /** A human-readable description for logs (e.g. `CPU`, `CUDA device 0`). */
  readonly description: string;
}

/**
 * Execution providers for one instance. KIND_GPU without a usable GPU: CPU with a warning naming
 * the fallback, or UNAVAILABLE when `strictGpu`.
 */
export function instanceProviders(
  config: ModelConfig,
  instance: Pick<InstanceSpec, 'name' | 'kind' | 'device'>,
  log: Logger,
  strictGpu: boolean,
  gpu: GpuSupport = gpuSupport(),
): ProviderChoice {
  const accelerators = config.optimization?.execution_accelerators;
  for (const acc of accelerators?.cpu_execution_accelerator ?? []) {
    if (acc.name === 'openvino') {
      log.warn(`model '${config.name}' instance '${instance.name}': the OpenVINO execution accelerator is not available in onnxruntime-node; using the default CPU execution provider`);
    } else {
      throw new InferError('INVALID_ARG', `unknown Execution Accelerator '${acc.name}' is requested`);
    }
  }
  if (instance.kind !== 'GPU') return { executionProviders: ['cpu'], description: 'CPU' };
  const gpuAccelerators = accelerators?.gpu_execution_accelerator ?? [];
  for (const acc of gpuAccelerators) {
    if (acc.name !== 'tensorrt' && acc.name !== 'cuda') {
      throw new InferError('INVALID_ARG', `unknown Execution Accelerator '${acc.name}' is requested`);
    }
  }
  if (!gpu.cuda) {
    if (strictGpu) {
      throw new InferError(
        'UNAVAILABLE',
        `model '${config.name}' instance '${instance.name}' needs a GPU (KIND_GPU) but ${gpu.reason}; refusing to fall back to CPU because the server runs with strict GPU placement`,
      );
    }
    log.warn(
      `model '${config.name}' instance '${instance.name}': KIND_GPU requested but ${gpu.reason}; falling back to the CPU execution provider`,
    );
    return { executionProviders: ['cpu'], description: 'CPU (fallback from KIND_GPU)' };
  }
  const providers: ProviderChoice['executionProviders'] = [];
  for (const acc of gpuAccelerators) {
    if (acc.name === 'tensorrt') {
      if (!gpu.tensorrt) {
        log.warn(`model '${config.name}' instance '${instance.name}': TensorRT execution provider unavailable; using CUDA`);
        continue;
      }
      const keys = Object.keys(acc.parameters ?? {});
      if (keys.length > 0) {
        // onnxruntime-node's TensorRT provider takes a device id only.
        log.warn(`model '${config.name}' instance '${instance.name}': TensorRT parameters not supported by onnxruntime-node are ignored: ${keys.join(', ')}`);
      }
      providers.push({ name: 'tensorrt', deviceId: instance.device });
    }
  }
  providers.push({ name: 'cuda', deviceId: instance.device }, 'cpu');
  return { executionProviders: providers, description: `${providers.length > 2 ? 'TensorRT+' : ''}CUDA device ${instance.device}` };
}
