/**
 * Triton's single-config validation, with Triton's messages (core:src/model_config_utils.cc
 * ValidateModelConfig, ValidateEnsembleSchedulingConfig, ValidateInstanceGroup,
 * ValidateModelIOConfig; backend_model.cc for the `runtime` library checks). Checks that need other
 * models (ensemble steps against their composing models) live with the repository.
 *
 * One deliberate difference: an ensemble may carry `dynamic_batching` (pipeline batching).
 */
import type { ModelConfig } from './model-config.ts';
import { BACKENDS, PLATFORMS } from './normalize.ts';
import { checkModelNameMatchesDirectory } from './model-name.ts';
import { fail } from './validation-error.ts';
import { validateDynamicBatching, validateSequenceBatching } from './validate-batching.ts';
import { validateEnsemble } from './validate-ensemble.ts';
import { validateInstanceGroups, validateModelFilenames, validateRuntime } from './validate-instances.ts';
import { validateIO } from './validate-io.ts';

export { ConfigValidationError } from './validation-error.ts';
export { pathEscapesParent } from './validate-instances.ts';

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

/** The most bounds a `model_metrics` histogram may have. */
export const MAX_HISTOGRAM_BUCKETS = 1000;

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
    const buckets = mc.histogram_options.buckets;
    if (buckets.length === 0) fail("histogram options must specify non-empty 'buckets'", path);
    // Beyond Triton: every request walks the buckets on the main thread and every scrape prints
    // them, and a NaN bound (the JSON form takes "NaN") printed le="NaN" for every model's scrape.
    if (buckets.length > MAX_HISTOGRAM_BUCKETS) {
      fail(`histogram options have ${buckets.length} 'buckets'; at most ${MAX_HISTOGRAM_BUCKETS} are allowed`, `${path}.histogram_options.buckets`);
    }
    buckets.forEach((b, j) => {
      if (!Number.isFinite(b) || (j > 0 && b <= buckets[j - 1]!)) {
        fail(`histogram 'buckets' must be finite and in increasing order, got ${b} at index ${j}`, `${path}.histogram_options.buckets`);
      }
    });
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
  validateModelFilenames(config);
  validateInstanceGroups(config, options);
  validateIO(config);
}
