/** The `runtime` library checks (backend_model.cc) and ValidateInstanceGroup, Triton's messages. */
import type { ModelConfig } from './model-config.ts';
import { BACKENDS, PLATFORMS } from './normalize.ts';
import type { ValidateOptions } from './validate.ts';
import { ConfigValidationError, fail } from './validation-error.ts';

const PYTHON_BASED_RUNTIME = /\.(py|ts|js|mjs)$/;

/**
 * Beyond Triton (which has no bound): the most instances one model may ask for, all groups, GPUs
 * and versions together. Each instance is a worker thread or process, and the load API lets any client
 * that reaches the port send a config: without a bound, `count: 100000000` builds 10^8 instance
 * specs on the main thread and takes the server down with it. Public configs ask for 1 to 64.
 */
export const MAX_INSTANCES_PER_MODEL = 1024;

/**
 * Beyond Triton: the most instances loaded in one server, every model and version together (a
 * reload's new version counts beside the one it replaces until that is unloaded). The per-model
 * bound alone let a load-API client load each model of the repository at 1024 instances (a
 * repository of 50 models: 51,200 workers); past this bound a load is refused naming it.
 */
export const MAX_INSTANCES_PER_SERVER = 4096;

/**
 * Beyond Triton: the most sequence slots one model version may ask for, every instance together.
 * The sequence batcher builds each slot up front (max(1, max_batch_size) per instance, or
 * `oldest.max_candidate_sequences`): `max_candidate_sequences: 2147483647` through the load API ran
 * the server out of memory. Public configs ask for 4 to a few thousand.
 */
export const MAX_SEQUENCE_SLOTS_PER_MODEL = 65536;

/** Instances one group starts, counted as version-loader's instanceSpecs spawns them: count (at least 1) per listed GPU. */
function groupInstances(group: ModelConfig['instance_group'][number]): number {
  return Math.max(1, group.count) * (group.kind === 'KIND_GPU' ? Math.max(1, group.gpus.length) : 1);
}

/** Instances one version of `config` starts (0 for an ensemble, which runs none). */
export function instancesPerVersion(config: ModelConfig): number {
  if (config.ensemble_scheduling) return 0;
  return config.instance_group.reduce((n, g) => n + groupInstances(g), 0);
}

/**
 * Every version under the policy starts its own instances: `version_policy { all {} }` over the
 * 4096 version folders one load may upload started 4096 workers. The versions a load selects
 * together stay within MAX_INSTANCES_PER_MODEL.
 */
export function checkInstancesAcrossVersions(config: ModelConfig, versions: number): void {
  const perVersion = instancesPerVersion(config);
  const total = perVersion * versions;
  if (total <= MAX_INSTANCES_PER_MODEL) return;
  fail(
    `model ${config.name} would start ${total} instances (${versions} versions under its version policy, ${perVersion} instances each); at most ${MAX_INSTANCES_PER_MODEL} are allowed across its versions`,
    'version_policy',
  );
}

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
export function validateRuntime(config: ModelConfig, options: ValidateOptions): void {
  const runtime = config.runtime;
  if (runtime === '' || config.platform === PLATFORMS.ensemble) return;
  if (pathEscapesParent(runtime)) fail(`backend library name '${runtime}' escapes backend directory`, 'runtime');
  if (config.backend === BACKENDS.python && PYTHON_BASED_RUNTIME.test(runtime)) return;
  if (options.knownRuntimes?.includes(runtime)) return;
  fail(`unable to find backend library '${runtime}' for model '${config.name}'`, 'runtime');
}

/**
 * Beyond Triton: `default_model_filename` and `cc_model_filenames` name a file inside the version
 * folder. Backends join them to it, so through the load API's config override (no upload needed)
 * `../../../x.ts` or `/abs/x.js` made the TypeScript backend import any file the server can read
 * as model code, in the server's thread, and the ONNX backend open any file.
 */
export function validateModelFilenames(config: ModelConfig): void {
  const check = (file: string, field: string): void => {
    if (file !== '' && pathEscapesParent(file)) {
      fail(`model file name '${file}' of model ${config.name} escapes its version directory`, field);
    }
  };
  check(config.default_model_filename, 'default_model_filename');
  for (const [cc, file] of Object.entries(config.cc_model_filenames ?? {})) check(file, `cc_model_filenames[${cc}]`);
}

/** ValidateInstanceGroup. */
export function validateInstanceGroups(config: ModelConfig, options: ValidateOptions): void {
  if (config.ensemble_scheduling) return;
  const model = config.name;
  if (config.instance_group.length === 0) fail(`must specify one or more 'instance group's for ${model}`, 'instance_group');
  const supported = [...new Set(options.supportedGpus ?? [])].sort((a, b) => a - b);
  const cc = (options.minComputeCapability ?? 6.0).toFixed(6);
  let instances = 0;
  config.instance_group.forEach((group, i) => {
    instances += groupInstances(group);
    if (instances > MAX_INSTANCES_PER_MODEL) {
      fail(
        `instance group ${group.name} of model ${model} has count ${group.count}${group.kind === 'KIND_GPU' && group.gpus.length > 1 ? ` on ${group.gpus.length} GPUs` : ''}, which makes ${instances} instances of the model; at most ${MAX_INSTANCES_PER_MODEL} are allowed`,
        `instance_group[${i}].count`,
      );
    }
  });
  checkSequenceSlots(config, instances);
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

/** The sequence batcher's slots (as SequenceBatcher counts them) stay within MAX_SEQUENCE_SLOTS_PER_MODEL. */
function checkSequenceSlots(config: ModelConfig, instances: number): void {
  const sb = config.sequence_batching;
  if (!sb) return;
  const candidates = sb.oldest?.max_candidate_sequences ?? 0;
  const perInstance = candidates > 0 ? candidates : Math.max(1, config.max_batch_size);
  const slots = perInstance * instances;
  if (slots <= MAX_SEQUENCE_SLOTS_PER_MODEL) return;
  const [what, field] =
    candidates > 0
      ? [`max_candidate_sequences ${candidates}`, 'sequence_batching.oldest.max_candidate_sequences']
      : [`max_batch_size ${config.max_batch_size}`, 'max_batch_size'];
  fail(
    `sequence batching of model ${config.name} would hold ${slots} sequence slots (${what} per instance, ${instances} instances); at most ${MAX_SEQUENCE_SLOTS_PER_MODEL} are allowed`,
    field,
  );
}
