/**
 * Triton's config normalization (core:src/model_config_utils.cc): AutoCompleteBackendFields
 * (platform ↔ backend ↔ default_model_filename), NormalizeModelConfig (version policy, preferred
 * batch sizes, sequence idle time, pinned memory) and NormalizeInstanceGroup (default group, names,
 * KIND_AUTO resolution, counts, GPUs). Backend auto-complete from model files is the backends' job
 * and runs before this.
 */
import { InferError } from '../errors.ts';
import type { ModelConfig, ModelInstanceGroup } from './model-config.ts';
import { fillDefaults, messageDescriptor } from './schema.ts';

/** Platform, backend and file names Triton knows (core:src/constants.h). */
export const PLATFORMS = {
  tensorflowSavedModel: 'tensorflow_savedmodel',
  tensorflowGraphDef: 'tensorflow_graphdef',
  tensorrtPlan: 'tensorrt_plan',
  onnxruntimeOnnx: 'onnxruntime_onnx',
  pytorchLibTorch: 'pytorch_libtorch',
  ensemble: 'ensemble',
} as const;

export const BACKENDS = {
  tensorflow: 'tensorflow',
  tensorrt: 'tensorrt',
  onnxruntime: 'onnxruntime',
  openvino: 'openvino',
  pytorch: 'pytorch',
  python: 'python',
} as const;

const FILES = {
  savedModel: 'model.savedmodel',
  graphDef: 'model.graphdef',
  plan: 'model.plan',
  onnx: 'model.onnx',
  openvino: 'model.xml',
  libtorch: 'model.pt',
  python: 'model.py',
} as const;

/** Tritium's python-like backend runs `model.ts` / `model.js` / `model.mjs` where Triton runs `model.py`. */
const PYTHON_LIKE_FILES = new Set([FILES.python, 'model.ts', 'model.js', 'model.mjs']);

/** Default `max_sequence_idle_microseconds` (1 s), SEQUENCE_IDLE_DEFAULT_MICROSECONDS. */
export const SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000;

export interface VersionDirEntry {
  readonly name: string;
  readonly isDirectory: boolean;
}

export interface NormalizeOptions {
  /** The model's folder name; fills an empty `name` (Triton does the same). */
  modelName?: string;
  /**
   * Entries of the first (lowest, lexically) version folder, when the model has one: lets autofill
   * pick a backend from the model file (`model.onnx` → onnxruntime, ...). Omit when there is none.
   */
  firstVersionEntries?: readonly VersionDirEntry[];
  /** GPU ids this server can use. Tritium runs on CPU: default none, so KIND_AUTO resolves to KIND_CPU. */
  supportedGpus?: readonly number[];
  /** A backend's preferred instance groups (TRITONBACKEND's auto-complete), tried in order. */
  preferredInstanceGroups?: readonly ModelInstanceGroup[];
}

function clone(config: ModelConfig): ModelConfig {
  return structuredClone(config);
}

function newGroup(): ModelInstanceGroup {
  const g: Record<string, unknown> = {};
  fillDefaults(messageDescriptor('inference.ModelInstanceGroup'), g);
  return g as unknown as ModelInstanceGroup;
}

/**
 * AutoCompleteBackendFields: fills `name`, `platform`, `backend` and `default_model_filename` from
 * each other and from the version folder's contents. Mutates `config`. Each framework in Triton's
 * order decides when the fields (or, with none given, the folder's files) name it.
 */
function autoCompleteBackendFields(config: ModelConfig, modelName: string, entries: readonly VersionDirEntry[] | undefined) {
  if (config.name === '') config.name = modelName;
  const folder = versionFolder(config, entries);
  if (completeTensorFlow(config, folder)) return;
  if (completeTensorRt(config, folder)) return;
  if (completeOnnxRuntime(config, folder)) return;
  if (completeOpenVino(config, folder)) return;
  if (completePyTorch(config, folder)) return;
  if (completePython(config, folder)) return;
  completeCustomBackend(config, modelName);
}

/** What the auto-complete reads of the version folder (none when the model has no version yet). */
interface VersionFolder {
  readonly hasVersion: boolean;
  /** An entry of that name, file or folder. */
  has(name: string): boolean;
  isFile(name: string): boolean;
  isDir(name: string): boolean;
  some(test: (entry: VersionDirEntry) => boolean): boolean;
  /** Neither platform nor default_model_filename is given and there is a version folder: its files decide. */
  noHints(): boolean;
}

function versionFolder(config: ModelConfig, entries: readonly VersionDirEntry[] | undefined): VersionFolder {
  const hasVersion = entries !== undefined;
  const find = (file: string) => entries?.find((e) => e.name === file);
  return {
    hasVersion,
    has: (file) => find(file) !== undefined,
    isFile: (file) => find(file)?.isDirectory === false,
    isDir: (file) => find(file)?.isDirectory === true,
    some: (test) => entries?.some(test) === true,
    noHints: () => config.platform === '' && config.default_model_filename === '' && hasVersion,
  };
}

/** TensorFlow: the platform decides. */
function completeTensorFlow(config: ModelConfig, folder: VersionFolder): boolean {
  if (config.platform === '' && (config.backend === '' || config.backend === BACKENDS.tensorflow)) {
    if (config.default_model_filename === FILES.savedModel) config.platform = PLATFORMS.tensorflowSavedModel;
    else if (config.default_model_filename === FILES.graphDef) config.platform = PLATFORMS.tensorflowGraphDef;
    else if (config.default_model_filename === '' && folder.hasVersion) {
      if (folder.isDir(FILES.savedModel)) config.platform = PLATFORMS.tensorflowSavedModel;
      if (folder.isFile(FILES.graphDef)) config.platform = PLATFORMS.tensorflowGraphDef;
    }
  }
  if (config.platform !== PLATFORMS.tensorflowSavedModel && config.platform !== PLATFORMS.tensorflowGraphDef) return false;
  if (config.backend === '') config.backend = BACKENDS.tensorflow;
  if (config.default_model_filename === '') {
    config.default_model_filename = config.platform === PLATFORMS.tensorflowSavedModel ? FILES.savedModel : FILES.graphDef;
  }
  return true;
}

function completeTensorRt(config: ModelConfig, folder: VersionFolder): boolean {
  if (config.backend === '') {
    if (config.platform === PLATFORMS.tensorrtPlan || config.default_model_filename === FILES.plan) {
      config.backend = BACKENDS.tensorrt;
    } else if (folder.noHints() && folder.isFile(FILES.plan)) {
      config.backend = BACKENDS.tensorrt;
    }
  }
  if (config.backend !== BACKENDS.tensorrt) return false;
  if (config.platform === '') config.platform = PLATFORMS.tensorrtPlan;
  if (config.default_model_filename === '') config.default_model_filename = FILES.plan;
  return true;
}

/** ONNX Runtime (a large ONNX model may be a folder, so any entry counts). */
function completeOnnxRuntime(config: ModelConfig, folder: VersionFolder): boolean {
  if (config.backend === '') {
    if (config.platform === PLATFORMS.onnxruntimeOnnx || config.default_model_filename === FILES.onnx) {
      config.backend = BACKENDS.onnxruntime;
    } else if (folder.noHints() && folder.has(FILES.onnx)) {
      config.backend = BACKENDS.onnxruntime;
    }
  }
  if (config.backend !== BACKENDS.onnxruntime) return false;
  if (config.platform === '') config.platform = PLATFORMS.onnxruntimeOnnx;
  if (config.default_model_filename === '') config.default_model_filename = FILES.onnx;
  return true;
}

function completeOpenVino(config: ModelConfig, folder: VersionFolder): boolean {
  if (config.backend === '') {
    if (config.default_model_filename === FILES.openvino) config.backend = BACKENDS.openvino;
    else if (folder.noHints() && folder.has(FILES.openvino)) config.backend = BACKENDS.openvino;
  }
  if (config.backend !== BACKENDS.openvino) return false;
  if (config.default_model_filename === '') config.default_model_filename = FILES.openvino;
  return true;
}

function completePyTorch(config: ModelConfig, folder: VersionFolder): boolean {
  if (config.backend === '') {
    if (config.platform === PLATFORMS.pytorchLibTorch || config.default_model_filename === FILES.libtorch) {
      config.backend = BACKENDS.pytorch;
    } else if (folder.noHints() && folder.isFile(FILES.libtorch)) {
      config.backend = BACKENDS.pytorch;
    }
  }
  if (config.backend !== BACKENDS.pytorch) return false;
  if (config.platform === '') config.platform = PLATFORMS.pytorchLibTorch;
  if (config.runtime !== FILES.python && config.default_model_filename === '') {
    config.default_model_filename = FILES.libtorch;
  }
  return true;
}

/** Python (Tritium: also model.ts / model.js / model.mjs). */
function completePython(config: ModelConfig, folder: VersionFolder): boolean {
  if (config.backend === '') {
    if (PYTHON_LIKE_FILES.has(config.default_model_filename)) config.backend = BACKENDS.python;
    else if (folder.noHints() && folder.some((e) => PYTHON_LIKE_FILES.has(e.name))) config.backend = BACKENDS.python;
  }
  if (config.backend !== BACKENDS.python) return false;
  if (config.default_model_filename === '') config.default_model_filename = FILES.python;
  return true;
}

/** A custom backend, only when nothing at all is given: the backend comes from `model.<backend>`. */
function completeCustomBackend(config: ModelConfig, modelName: string): void {
  if (config.backend !== '' || config.platform !== '' || config.default_model_filename !== '') return;
  const dot = modelName.indexOf('.');
  if (dot < 0) {
    throw new InferError(
      'INVALID_ARG',
      `Invalid model name: Could not determine backend for model '${modelName}' with no backend in model ` +
        `configuration. Expected model name of the form 'model.<backend_name>'.`,
    );
  }
  const backend = modelName.slice(dot + 1);
  config.backend = backend;
  config.default_model_filename = `model.${backend}`;
}

/** NormalizeModelConfig. Mutates `config`. */
function normalizeScheduling(config: ModelConfig): void {
  if (!config.version_policy) config.version_policy = { latest: { num_versions: 1 } };

  if (config.dynamic_batching && config.dynamic_batching.preferred_batch_size.length === 0 && config.max_batch_size > 0) {
    config.dynamic_batching.preferred_batch_size.push(config.max_batch_size);
  }

  const seq = config.sequence_batching;
  if (seq) {
    if (seq.max_sequence_idle_microseconds === 0 || seq.max_sequence_idle_microseconds === 0n) {
      seq.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
    }
    if (seq.oldest && seq.oldest.preferred_batch_size.length === 0 && config.max_batch_size > 0) {
      seq.oldest.preferred_batch_size.push(config.max_batch_size);
    }
  }

  // Pinned memory defaults apply to everything that is not an ensemble.
  if (!config.ensemble_scheduling) {
    if (!config.optimization) {
      const opt: Record<string, unknown> = {};
      fillDefaults(messageDescriptor('inference.ModelOptimizationPolicy'), opt);
      config.optimization = opt as unknown as NonNullable<ModelConfig['optimization']>;
    }
    config.optimization.input_pinned_memory ??= { enable: true };
    config.optimization.output_pinned_memory ??= { enable: true };
  }
}

/** SetDefaultInstanceCount: 1, or 2 for CPU groups of the TensorFlow and ONNX Runtime backends. */
function defaultInstanceCount(group: ModelInstanceGroup, backend: string): number {
  const twoOnCpu = backend === BACKENDS.tensorflow || backend === BACKENDS.onnxruntime;
  return group.kind === 'KIND_CPU' && twoOnCpu ? 2 : 1;
}

/** NormalizeInstanceGroup. Mutates `config`. */
function normalizeInstanceGroups(config: ModelConfig, options: NormalizeOptions): void {
  if (config.ensemble_scheduling) return;
  const supported = new Set(options.supportedGpus ?? []);
  const preferred = options.preferredInstanceGroups ?? [];

  if (config.instance_group.length === 0) {
    const group = newGroup();
    group.name = config.name;
    for (const pg of preferred) {
      if (pg.kind === 'KIND_GPU') {
        if (supported.size === 0) continue;
        for (const gid of pg.gpus) if (supported.has(gid)) group.gpus.push(gid);
      } else if (pg.kind === 'KIND_AUTO') {
        group.gpus.push(...pg.gpus);
      }
      group.kind = pg.kind;
      group.count = pg.count;
      break;
    }
    config.instance_group.push(group);
  }

  config.instance_group.forEach((group, index) => {
    if (group.name === '') group.name = `${config.name}_${index}`;

    if (group.kind === 'KIND_AUTO') {
      const allListedPresent = group.gpus.every((gid) => supported.has(gid));
      group.kind = supported.size === 0 || !allListedPresent ? 'KIND_CPU' : 'KIND_GPU';
    }

    for (const pg of preferred) {
      if (group.kind !== pg.kind) continue;
      if (group.kind === 'KIND_GPU' && group.gpus.length === 0 && pg.gpus.length > 0) {
        for (const gid of pg.gpus) if (supported.has(gid)) group.gpus.push(gid);
        if (group.gpus.length === 0) continue;
      }
      if (group.count < 1 && pg.count > 0) group.count = pg.count;
    }

    if (group.count < 1) group.count = defaultInstanceCount(group, config.backend);
    if (group.kind === 'KIND_GPU' && group.gpus.length === 0) group.gpus.push(...[...supported].sort((a, b) => a - b));
  });
}

/**
 * Applies Triton's defaults to a parsed config and returns the result (the input is not changed):
 * `name` from the folder, platform/backend/default_model_filename auto-completed,
 * `version_policy` latest{1}, `dynamic_batching.preferred_batch_size` [max_batch_size] when empty,
 * `sequence_batching.max_sequence_idle_microseconds` 1 s, pinned-memory optimization on for
 * non-ensembles, and one instance group (named after the model) when none is given, each group
 * named `<model>_<index>` if unnamed, KIND_AUTO resolved (CPU when no GPU), count defaulted.
 *
 * @throws InferError INVALID_ARG when no backend can be determined (Triton's message).
 */
export function normalizeModelConfig(config: ModelConfig, options: NormalizeOptions = {}): ModelConfig {
  const out = clone(config);
  autoCompleteBackendFields(out, options.modelName ?? out.name, options.firstVersionEntries);
  normalizeScheduling(out);
  normalizeInstanceGroups(out, options);
  return out;
}
