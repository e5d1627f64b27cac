/**
 * Triton's single-config validation, with Triton's messages (core:src/model_config_utils.cc
 * ValidateModelConfig, ValidateEnsembleSchedulingConfig, ValidateInstanceGroup,
 * ValidateModelIOConfig; backend_model.cc for the `runtime` library checks). Checks that need other
 * models (ensemble steps against their composing models) live with the repository.
 *
 * One deliberate difference: an ensemble may carry `dynamic_batching` (pipeline batching).
 */
import { ConfigValidationError } from './validation-error.ts';
import type { ModelConfig, ModelInput, ModelOutput, SequenceControlKind } from './model-config.ts';
import { BACKENDS, PLATFORMS } from './normalize.ts';
import { checkModelNameMatchesDirectory } from './model-name.ts';

export { ConfigValidationError };

export interface ValidateOptions {
  /**
   * GPU ids this server can use. When given, KIND_GPU groups are checked against them as a
   * GPU-enabled Triton does. When omitted, KIND_GPU groups pass: placing them is the backend's job
   * (Tritium's CPU backends run them on CPU), so configs written for GPU servers load unchanged.
   */
  supportedGpus?: readonly number[];
  /** Minimum CUDA compute capability, only used in messages (Triton's default 6.0). */
  minComputeCapability?: number;
  /**
   * Backend library / runtime file names this server can load for `runtime:` (beyond python-based
   * runtimes, `*.py` / `*.ts` / `*.js` / `*.mjs`, of the python backend).
   */
  knownRuntimes?: readonly string[];
  /**
   * The model's folder name, when the config came from a repository: `name` must equal it. Checked
   * where Triton checks it (after the config-level rules, before runtime, instances and I/O).
   */
  directoryName?: string;
}

const WILDCARD_DIM = -1;

function fail(message: string, fieldPath = ''): never {
  throw new ConfigValidationError(message, fieldPath);
}

function n(v: number | bigint): number {
  return typeof v === 'bigint' ? Number(v) : v;
}

/** triton::common::GetElementCount: -1 if any dim is variable, 0 for no dims. */
function elementCount(dims: readonly (number | bigint)[]): number {
  let count = 0;
  let first = true;
  for (const raw of dims) {
    const d = n(raw);
    if (d === WILDCARD_DIM) return -1;
    count = first ? d : count * d;
    first = false;
  }
  return count;
}

function chunkCounts(dims: readonly (number | bigint)[]): number[] {
  const out: number[] = [];
  let current = 1;
  for (const raw of dims) {
    const d = n(raw);
    if (d !== WILDCARD_DIM) current *= d;
    else {
      out.push(current);
      current = 1;
    }
  }
  out.push(current);
  return out;
}

function validateIOShape(io: ModelInput | ModelOutput, maxBatchSize: number, prefix: string, path: string): void {
  if (io.name === '') fail(`${prefix}must specify 'name'`, `${path}.name`);
  const p = `${prefix}'${io.name}' `;
  if (io.data_type === 'TYPE_INVALID') fail(`${p}must specify 'data_type'`, `${path}.data_type`);
  if (io.dims.length === 0) fail(`${p}must specify 'dims'`, `${path}.dims`);
  if (io.reshape && io.reshape.shape.length === 0 && maxBatchSize === 0) {
    fail(`${p}cannot have empty reshape for non-batching model as scalar tensors are not supported`, `${path}.reshape`);
  }
  for (const d of io.dims) {
    if (n(d) < 1 && n(d) !== WILDCARD_DIM) {
      fail(`${p}dimension must be integer >= 1, or ${WILDCARD_DIM} to indicate a variable-size dimension`, `${path}.dims`);
    }
  }
  if (!io.reshape) return;
  for (const d of io.reshape.shape) {
    if (n(d) < 1 && n(d) !== WILDCARD_DIM) {
      fail(
        `${p}reshape dimensions must be integer >= 1, or ${WILDCARD_DIM} to indicate a variable-size dimension`,
        `${path}.reshape`,
      );
    }
  }
  const dimsSize = elementCount(io.dims);
  const reshapeSize = elementCount(io.reshape.shape);
  // An empty reshape (scalar per batch item) matches dims with one element.
  if (dimsSize !== reshapeSize && (reshapeSize !== 0 || dimsSize !== 1)) {
    fail(`${p}has different size for dims and reshape`, `${path}.reshape`);
  }
  if (dimsSize === -1) {
    // Compare the element counts of the runs between variable-size dimensions: [2,4,-1,6] ~ [8,-1,1,6].
    const a = chunkCounts(io.dims);
    const b = chunkCounts(io.reshape.shape);
    if (a.length !== b.length) {
      fail(`${p}has different number of variable-size dimensions for dims and reshape`, `${path}.reshape`);
    }
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) fail(`${p}has different size for dims and reshape`, `${path}.reshape`);
    }
  }
}

function validateNonLinearFormatIO(io: ModelInput | ModelOutput, platform: string, isInput: boolean, path: string) {
  if (!io.is_non_linear_format_io) return;
  if (platform !== PLATFORMS.tensorrtPlan) {
    fail('Non-linear IO format is only supported for the TensorRT platform', `${path}.is_non_linear_format_io`);
  }
  if (io.dims.length !== 3) fail(`Non-linear IO format ${isInput ? 'input' : 'output'} requires 3 dims`, `${path}.dims`);
}

/** ValidateModelIOConfig: inputs, outputs, batch inputs/outputs; every message ends ` for <model>`. */
function validateIO(config: ModelConfig): void {
  try {
    config.input.forEach((io, i) => {
      const path = `input[${i}]`;
      validateIOShape(io, config.max_batch_size, 'model input ', path);
      if ((io.format === 'FORMAT_NHWC' || io.format === 'FORMAT_NCHW') && io.dims.length !== 3) {
        fail('model input NHWC/NCHW require 3 dims', `${path}.format`);
      }
      if (config.platform !== PLATFORMS.tensorrtPlan && io.is_shape_tensor) {
        fail('shape tensors are only supported for TensorRT platform', `${path}.is_shape_tensor`);
      }
      validateNonLinearFormatIO(io, config.platform, true, path);
    });
    config.output.forEach((io, i) => {
      const path = `output[${i}]`;
      validateIOShape(io, config.max_batch_size, 'model output ', path);
      if (config.platform !== PLATFORMS.tensorrtPlan && io.is_shape_tensor) {
        fail('shape tensors are only supported for TensorRT platform', `${path}.is_shape_tensor`);
      }
      validateNonLinearFormatIO(io, config.platform, false, path);
    });
    validateBatchIO(config);
  } catch (e) {
    if (e instanceof ConfigValidationError) throw new ConfigValidationError(`${e.message} for ${config.name}`, e.fieldPath);
    throw e;
  }
}

function validateBatchIO(config: ModelConfig): void {
  const inputs = new Set(config.input.map((io) => io.name));
  const outputs = new Set(config.output.map((io) => io.name));
  config.batch_input.forEach((b, i) => {
    const path = `batch_input[${i}]`;
    if (b.source_input.length !== 1) {
      fail(`batch input kind '${b.kind}' expects 1 source input, got ${b.source_input.length}`, `${path}.source_input`);
    }
    if (b.data_type !== 'TYPE_INT32' && b.data_type !== 'TYPE_FP32') {
      fail('batch input data type must be TYPE_INT32 or TYPE_FP32', `${path}.data_type`);
    }
    for (const s of b.source_input) {
      if (!inputs.has(s)) fail(`unknown source input name '${s}'`, `${path}.source_input`);
    }
  });
  config.batch_output.forEach((b, i) => {
    const path = `batch_output[${i}]`;
    if (b.source_input.length !== 1) {
      fail(`batch output kind '${b.kind}' expects 1 source input, got ${b.source_input.length}`, `${path}.source_input`);
    }
    for (const s of b.source_input) {
      if (!inputs.has(s)) fail(`unknown source input name '${s}'`, `${path}.source_input`);
    }
    const seen = new Set<string>();
    for (const t of b.target_name) {
      if (!outputs.has(t)) fail(`unknown target output name '${t}'`, `${path}.target_name`);
      if (seen.has(t)) fail(`target output name '${t}' can only be specified once`, `${path}.target_name`);
      seen.add(t);
    }
  });
}

type BackendType = 'tensorflow' | 'tensorrt' | 'onnxruntime' | 'pytorch' | 'unknown';

function backendTypeOfPlatform(platform: string): BackendType {
  if (platform === PLATFORMS.tensorflowGraphDef || platform === PLATFORMS.tensorflowSavedModel) return 'tensorflow';
  if (platform === PLATFORMS.tensorrtPlan) return 'tensorrt';
  if (platform === PLATFORMS.onnxruntimeOnnx) return 'onnxruntime';
  if (platform === PLATFORMS.pytorchLibTorch) return 'pytorch';
  return 'unknown';
}

function backendTypeOfBackend(backend: string): BackendType {
  if (backend === BACKENDS.tensorflow) return 'tensorflow';
  if (backend === BACKENDS.tensorrt) return 'tensorrt';
  if (backend === BACKENDS.onnxruntime) return 'onnxruntime';
  if (backend === BACKENDS.pytorch) return 'pytorch';
  return 'unknown';
}

/** GetBooleanSequenceControlProperties / GetTypedSequenceControlProperties, validation part. */
function checkSequenceControl(config: ModelConfig, kind: SequenceControlKind, typed: boolean): string | undefined {
  const batcher = config.sequence_batching!;
  const model = config.name;
  const seenTensors = new Set<string>();
  let found: { name: string; dataType: string } | undefined;
  batcher.control_input.forEach((ci, i) => {
    const path = `sequence_batching.control_input[${i}]`;
    if (ci.name === '') fail(`sequence batching control tensor must have a name for ${model}`, `${path}.name`);
    if (seenTensors.has(ci.name)) {
      fail(`sequence batching control tensor '${ci.name}' is specified for multiple control kinds for ${model}`, path);
    }
    seenTensors.add(ci.name);
    for (const c of ci.control) {
      if (c.kind !== kind) continue;
      if (found) fail(`sequence batching specifies multiple ${kind} tensors for ${model}`, path);
      found = { name: ci.name, dataType: c.data_type };
      const counts = [c.int32_false_true.length, c.fp32_false_true.length, c.bool_false_true.length];
      const given = counts.filter((x) => x !== 0).length;
      if (typed) {
        if (given > 0) {
          fail(
            `sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`,
            path,
          );
        }
        continue;
      }
      if (given === 0) {
        fail(
          `sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`,
          path,
        );
      }
      if (given > 1) {
        fail(
          `sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${model}`,
          path,
        );
      }
      const which = counts[0] ? 'int32_false_true' : counts[1] ? 'fp32_false_true' : 'bool_false_true';
      const count = counts[0] || counts[1] || counts[2];
      if (count !== 2) fail(`sequence batching control '${which}' must have exactly 2 entries for ${kind} for ${model}`, path);
    }
  });
  return found?.dataType;
}

function validateDynamicBatching(config: ModelConfig): void {
  const db = config.dynamic_batching!;
  const model = config.name;
  for (const size of db.preferred_batch_size) {
    if (size <= 0) fail(`dynamic batching preferred size must be positive for ${model}`, 'dynamic_batching.preferred_batch_size');
    if (size > config.max_batch_size) {
      fail(`dynamic batching preferred size must be <= max batch size for ${model}`, 'dynamic_batching.preferred_batch_size');
    }
  }
  const levels = BigInt(db.priority_levels);
  if (levels !== 0n) {
    const def = BigInt(db.default_priority_level);
    if (def === 0n || def > levels) {
      fail(`default priority level must be in range [1, ${levels}] for ${model}`, 'dynamic_batching.default_priority_level');
    }
    for (const key of Object.keys(db.priority_queue_policy)) {
      const level = BigInt(key);
      if (level === 0n || level > levels) {
        fail(
          `priority queue policy must have priority level in range [1, ${levels}] for ${model}`,
          'dynamic_batching.priority_queue_policy',
        );
      }
    }
  }
  if (db.preserve_ordering) {
    if (levels > 1n) {
      fail(`Only one priority level is allowed when 'preserve_ordering' is true for ${model}`, 'dynamic_batching.preserve_ordering');
    }
    const policies = [
      ...(db.default_queue_policy ? [db.default_queue_policy] : []),
      ...Object.values(db.priority_queue_policy),
    ];
    for (const policy of policies) {
      if (BigInt(policy.default_timeout_microseconds) !== 0n && policy.timeout_action === 'DELAY') {
        fail(
          `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${model}`,
          'dynamic_batching',
        );
      }
    }
  }
}

function validateSequenceBatching(config: ModelConfig): void {
  const model = config.name;
  const seq = config.sequence_batching!;
  if (config.response_cache?.enable) {
    fail(
      `Response Cache does not currently support model ${model} with sequence batching scheduler. Please disable the response cache.`,
      'response_cache',
    );
  }
  checkSequenceControl(config, 'CONTROL_SEQUENCE_START', false);
  checkSequenceControl(config, 'CONTROL_SEQUENCE_END', false);
  checkSequenceControl(config, 'CONTROL_SEQUENCE_READY', false);
  const corrid = checkSequenceControl(config, 'CONTROL_SEQUENCE_CORRID', true);
  if (corrid !== undefined && !['TYPE_UINT64', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_INT32', 'TYPE_STRING'].includes(corrid)) {
    fail(
      `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${model}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`,
      'sequence_batching.control_input',
    );
  }
  if (seq.oldest) {
    for (const size of seq.oldest.preferred_batch_size) {
      if (size <= 0) fail(`sequence batching preferred batch size must be positive for ${model}`, 'sequence_batching.oldest');
      if (size > config.max_batch_size) {
        fail(`sequence batching preferred batch size must be <= max batch size for ${model}`, 'sequence_batching.oldest');
      }
    }
  }
  if (seq.direct) {
    const u = seq.direct.minimum_slot_utilization;
    if (u < 0 || u > 1) {
      fail(`sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${model}`, 'sequence_batching.direct');
    }
  }
}

interface GraphTensor {
  readonly name: string;
  isOutput: boolean;
  ready: boolean;
  readonly prev: GraphTensor[];
  readonly next: GraphTensor[];
}

/** ValidateEnsembleSchedulingConfig: the ensemble's own rules and its data-flow graph. */
function validateEnsemble(config: ModelConfig): void {
  const e = config.name;
  if (config.platform !== PLATFORMS.ensemble) {
    fail(`ensemble scheduling cannot be set for model '${e}' whose platform is not ensemble`, 'ensemble_scheduling');
  }
  if (config.instance_group.length !== 0) fail(`instance group should not be specified for ensemble '${e}'`, 'instance_group');
  if (config.optimization) fail(`optimization should not be specified for ensemble '${e}'`, 'optimization');
  if (config.model_warmup.length !== 0) fail(`model_warmup can not be specified for ensemble '${e}'`, 'model_warmup');
  const steps = config.ensemble_scheduling!.step;
  if (steps.length === 0) fail(`must specify 'step' for ensemble '${e}'`, 'ensemble_scheduling');

  const tensors = new Map<string, GraphTensor>();
  const tensor = (name: string, isOutput: boolean): GraphTensor => {
    let t = tensors.get(name);
    if (!t) {
      t = { name, isOutput, ready: false, prev: [], next: [] };
      tensors.set(name, t);
    }
    return t;
  };
  steps.forEach((step, idx) => {
    const path = `ensemble_scheduling.step[${idx}]`;
    if (step.model_name === '') fail(`must specify 'model_name' in step ${idx} of ensemble '${e}'`, path);
    if (Object.keys(step.input_map).length === 0) fail(`must specify 'input_map' in step ${idx} of ensemble '${e}'`, path);
    if (Object.keys(step.output_map).length === 0) fail(`must specify 'output_map' in step ${idx} of ensemble '${e}'`, path);
    const produced: GraphTensor[] = [];
    for (const ensembleName of Object.values(step.output_map)) {
      const existing = tensors.get(ensembleName);
      if (existing) {
        if (existing.isOutput) {
          fail(`ensemble tensor '${ensembleName}' can appear in an output map only once for ensemble '${e}' step ${idx}`, path);
        }
        existing.isOutput = true;
        produced.push(existing);
      } else {
        produced.push(tensor(ensembleName, true));
      }
    }
    // Map keys are unique, so "input mapped to multiple ensemble tensors" cannot arise from a map.
    for (const ensembleName of Object.values(step.input_map)) {
      const consumed = tensor(ensembleName, false);
      for (const out of produced) {
        out.prev.push(consumed);
        consumed.next.push(out);
      }
    }
  });

  const queue: GraphTensor[] = [];
  for (const input of config.input) {
    const t = tensors.get(input.name);
    if (!t) fail(`ensemble input '${input.name}' for ensemble ${e}' is not used`, 'input');
    t.ready = true;
    queue.push(t);
  }
  for (let head = 0; head < queue.length; head++) {
    for (const next of queue[head]!.next) {
      if (next.ready) continue;
      if (next.prev.every((p) => p.ready)) {
        next.ready = true;
        queue.push(next);
      }
    }
  }
  const outputs = new Set<string>();
  for (const output of config.output) {
    const t = tensors.get(output.name);
    if (!t) fail(`ensemble output '${output.name}' for ensemble ${e}' is not used`, 'output');
    if (!t.ready) {
      let message = `output '${output.name}' for ensemble '${e}' is not written`;
      // Walk back to the first tensor that never became ready.
      let last = t;
      let prev: GraphTensor[] | undefined = t.prev;
      const seen = new Set<string>();
      while (prev && prev.length > 0) {
        const nodes: GraphTensor[] = prev;
        prev = undefined;
        for (const node of nodes) {
          if (!node.ready && !seen.has(node.name)) {
            seen.add(node.name);
            last = node;
            prev = node.prev;
            break;
          }
        }
      }
      if (last.name !== t.name) message += `: at least one of its depending tensors, '${last.name}', is not connected`;
      fail(message, 'output');
    }
    outputs.add(output.name);
  }
  for (const t of tensors.values()) {
    if (outputs.has(t.name)) continue;
    if (!t.ready || t.next.length === 0) fail(`ensemble tensor '${t.name}' is unused in ensemble '${e}'`, 'ensemble_scheduling');
  }
}

/** ValidateModelConfig. */
function validateTopLevel(config: ModelConfig): void {
  const model = config.name;
  if (model === '') fail("model configuration must specify 'name'", 'name');
  if (config.backend === '') {
    if (config.platform !== PLATFORMS.ensemble) fail(`unexpected platform type '${config.platform}' for ${model}`, 'platform');
  } else if (config.platform === PLATFORMS.ensemble) {
    fail(`Ensemble model '${model}' must have platform type '${config.platform}' and empty backend type`, 'backend');
  }
  if (config.platform === '' && config.backend === '') fail(`must specify 'platform' or 'backend' for '${model}'`, 'platform');
  const backendType = backendTypeOfBackend(config.backend);
  if (backendType !== 'unknown' && backendType !== backendTypeOfPlatform(config.platform)) {
    fail(`unexpected 'platform' and 'backend' pair, got:${config.platform}, ${config.backend}`, 'platform');
  }
  if (config.max_batch_size < 0) fail(`'max_batch_size' must be non-negative value for ${model}`, 'max_batch_size');
  if (!config.version_policy) fail(`must specify 'version policy' for ${model}`, 'version_policy');

  if (config.dynamic_batching) validateDynamicBatching(config);
  if (config.sequence_batching) validateSequenceBatching(config);

  if (config.ensemble_scheduling) validateEnsemble(config);
  else if (config.platform === PLATFORMS.ensemble) {
    fail(`ensemble scheduling must be set for ensemble ${model} whose platform is ensemble`, 'platform');
  }

  if (config.model_transaction_policy?.decoupled && config.response_cache?.enable) {
    fail(
      `Response Cache does not currently support model ${model} with 'decoupled' transaction policy. Please disable the response cache.`,
      'response_cache',
    );
  }
  config.model_metrics?.metric_control.forEach((mc, i) => {
    const path = `model_metrics.metric_control[${i}]`;
    if (!mc.metric_identifier) fail("metric control must specify 'metric_identifier'", path);
    if (mc.metric_identifier.family === '') fail("metric identifier must specify non-empty 'family'", path);
    if (!mc.histogram_options) fail("metric control must specify 'histogram_options'", path);
    if (mc.histogram_options.buckets.length === 0) fail("histogram options must specify non-empty 'buckets'", path);
  });
}

const PYTHON_BASED_RUNTIME = /\.(py|ts|js|mjs)$/;

/** True when `path` is absolute or climbs above its starting folder (IsChildPathEscapingParentPath). */
export function pathEscapesParent(path: string): boolean {
  if (path.startsWith('/')) return true;
  let depth = 0;
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    depth += part === '..' ? -1 : 1;
    if (depth < 0) return true;
  }
  return false;
}

/** The `runtime` field names a backend library (or a python-based runtime) that must resolve. */
function validateRuntime(config: ModelConfig, options: ValidateOptions): void {
  const runtime = config.runtime;
  if (runtime === '' || config.platform === PLATFORMS.ensemble) return;
  if (pathEscapesParent(runtime)) fail(`backend library name '${runtime}' escapes backend directory`, 'runtime');
  if (config.backend === BACKENDS.python && PYTHON_BASED_RUNTIME.test(runtime)) return;
  if (options.knownRuntimes?.includes(runtime)) return;
  fail(`unable to find backend library '${runtime}' for model '${config.name}'`, 'runtime');
}

/** ValidateInstanceGroup. */
function validateInstanceGroups(config: ModelConfig, options: ValidateOptions): void {
  if (config.ensemble_scheduling) return;
  const model = config.name;
  if (config.instance_group.length === 0) fail(`must specify one or more 'instance group's for ${model}`, 'instance_group');
  const supported = [...new Set(options.supportedGpus ?? [])].sort((a, b) => a - b);
  const cc = (options.minComputeCapability ?? 6.0).toFixed(6);
  config.instance_group.forEach((group, i) => {
    const path = `instance_group[${i}]`;
    const g = `instance group ${group.name} of model ${model}`;
    if (group.kind === 'KIND_MODEL') {
      if (group.gpus.length > 0) fail(`${g} has kind KIND_MODEL but specifies one or more GPUs`, `${path}.gpus`);
    } else if (group.kind === 'KIND_GPU') {
      if (options.supportedGpus === undefined) {
        // No GPU inventory declared: the backend decides where KIND_GPU instances run.
      } else if (group.gpus.length === 0) {
        fail(
          supported.length === 0 ? `${g} has kind KIND_GPU but no GPUs are available` : `${g} has kind KIND_GPU but specifies no GPUs`,
          `${path}.kind`,
        );
      }
      for (const gid of options.supportedGpus === undefined ? [] : group.gpus) {
        if (!supported.includes(gid)) {
          fail(
            `${g} specifies invalid or unsupported gpu id ${gid}. GPUs with at least the minimum required CUDA compute compatibility of ${cc} are: ${supported.join(', ')}`,
            `${path}.gpus`,
          );
        }
      }
    } else if (group.kind === 'KIND_CPU') {
      if (group.gpus.length > 0) fail(`${g} has kind KIND_CPU but specifies one or more GPUs`, `${path}.gpus`);
    } else {
      throw new ConfigValidationError(`instance group ${group.name} of model ${model} has unexpected kind KIND_AUTO`, `${path}.kind`, 'INTERNAL');
    }
    if (config.platform !== PLATFORMS.tensorrtPlan && group.profile.length > 0) {
      fail(
        `${g} and platform ${config.platform}specifies profile field which is only supported for TensorRT models`,
        `${path}.profile`,
      );
    }
    for (const profile of group.profile) {
      if (profile === '') fail('profile name must not be empty', `${path}.profile`);
      const idx = Number.parseInt(profile, 10);
      if (Number.isNaN(idx)) fail(`unable to parse '${profile}': stoi`, `${path}.profile`);
      if (idx < 0) {
        fail(
          `${g} and platform ${config.platform} specifies invalid profile ${profile}. The field should contain the string representation of a non-negative integer.`,
          `${path}.profile`,
        );
      }
    }
  });
}

/**
 * Every single-config rule Triton applies at load time, in Triton's order, on a normalized config
 * (see normalizeModelConfig): ValidateModelConfig (name, platform/backend, batching, queue
 * policies, sequence controls, the ensemble's own rules and data flow, response cache, metrics),
 * the folder-name rule (with `directoryName`), the `runtime` library checks, ValidateInstanceGroup
 * and ValidateModelIOConfig.
 *
 * @throws ConfigValidationError (InferError, INVALID_ARG) with Triton's message.
 */
export function validateModelConfig(config: ModelConfig, options: ValidateOptions = {}): void {
  validateTopLevel(config);
  if (options.directoryName !== undefined) checkModelNameMatchesDirectory(config, options.directoryName);
  validateRuntime(config, options);
  validateInstanceGroups(config, options);
  validateIO(config);
}
