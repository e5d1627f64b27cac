/**
 * Normalization defaults and the validation rules the L0 corpus does not exercise, with Triton's
 * messages (core:src/model_config_utils.cc).
 */
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { ConfigValidationError, modelConfigToJson, normalizeModelConfig, parseModelConfigText, validateModelConfig } from '../../src/config/index.ts';
import type { ModelConfig } from '../../src/index.ts';
import type { NormalizeOptions, ValidateOptions } from '../../src/config/index.ts';

function load(text: string, options: NormalizeOptions = {}): ModelConfig {
  return normalizeModelConfig(parseModelConfigText(text), options);
}

function invalid(text: string, options: ValidateOptions = {}): ConfigValidationError {
  const config = load(text, { supportedGpus: options.supportedGpus });
  try {
    validateModelConfig(config, options);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigValidationError);
    expect(InferError.is(e)).toBe(true);
    return e as ConfigValidationError;
  }
  throw new Error(`expected a validation error for:\n${text}`);
}

const IO = 'input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ] output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]';

describe('normalizeModelConfig', () => {
  it("applies Triton's defaults and leaves the input untouched", () => {
    const parsed = parseModelConfigText(`backend: "onnxruntime" max_batch_size: 8 dynamic_batching { } ${IO}`);
    const c = normalizeModelConfig(parsed, { modelName: 'm' });
    expect(parsed.name).toBe('');
    expect(c.name).toBe('m');
    expect(c.platform).toBe('onnxruntime_onnx');
    expect(c.default_model_filename).toBe('model.onnx');
    expect(c.version_policy).toEqual({ latest: { num_versions: 1 } });
    expect(c.dynamic_batching?.preferred_batch_size).toEqual([8]);
    expect(c.optimization?.input_pinned_memory).toEqual({ enable: true });
    expect(c.optimization?.output_pinned_memory).toEqual({ enable: true });
    expect(c.instance_group).toEqual([
      { name: 'm', kind: 'KIND_CPU', count: 2, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: '' },
    ]);
  });

  it('names unnamed groups <model>_<index>, resolves KIND_AUTO by the GPUs present, defaults counts', () => {
    const text = 'name: "m" backend: "python" instance_group [ { count: 3 }, { name: "g" kind: KIND_GPU }, { gpus: [ 1 ] } ]';
    const cpu = load(text);
    expect(cpu.instance_group.map((g) => [g.name, g.kind, g.count, g.gpus])).toEqual([
      ['m_0', 'KIND_CPU', 3, []],
      ['g', 'KIND_GPU', 1, []],
      ['m_2', 'KIND_CPU', 1, [1]],
    ]);
    const gpu = load(text, { supportedGpus: [0, 1] });
    expect(gpu.instance_group.map((g) => [g.name, g.kind, g.gpus])).toEqual([
      ['m_0', 'KIND_GPU', [0, 1]],
      ['g', 'KIND_GPU', [0, 1]],
      ['m_2', 'KIND_GPU', [1]],
    ]);
  });

  it('fills sequence batching defaults and skips instance groups and pinned memory for ensembles', () => {
    const seq = load('name: "s" backend: "python" max_batch_size: 4 sequence_batching { oldest { } }');
    expect(seq.sequence_batching?.max_sequence_idle_microseconds).toBe(1_000_000);
    expect(seq.sequence_batching?.oldest?.preferred_batch_size).toEqual([4]);
    const ens = load('name: "e" platform: "ensemble" max_batch_size: 4 ensemble_scheduling { } dynamic_batching { }');
    expect(ens.instance_group).toEqual([]);
    expect(ens.optimization).toBeUndefined();
    expect(ens.dynamic_batching?.preferred_batch_size).toEqual([4]);
  });

  it('completes platform/backend/default_model_filename from each other and from the version folder', () => {
    expect(load('', { modelName: 'a', firstVersionEntries: [{ name: 'model.onnx', isDirectory: false }] })).toMatchObject({
      backend: 'onnxruntime',
      platform: 'onnxruntime_onnx',
      default_model_filename: 'model.onnx',
    });
    expect(load('', { modelName: 'b', firstVersionEntries: [{ name: 'model.plan', isDirectory: false }] })).toMatchObject({
      backend: 'tensorrt',
      platform: 'tensorrt_plan',
    });
    expect(load('', { modelName: 'c', firstVersionEntries: [{ name: 'model.ts', isDirectory: false }] })).toMatchObject({
      backend: 'python',
      default_model_filename: 'model.py',
    });
    expect(load('platform: "tensorrt_plan"')).toMatchObject({ backend: 'tensorrt', default_model_filename: 'model.plan' });
    expect(load('', { modelName: 'model.identity' })).toMatchObject({ backend: 'identity', default_model_filename: 'model.identity' });
    expect(() => load('', { modelName: 'plain' })).toThrow(
      "Invalid model name: Could not determine backend for model 'plain' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'.",
    );
  });

  it('prints version_policy all as {} in JSON', () => {
    expect(modelConfigToJson(load('name: "m" backend: "python" version_policy: { all { }}'))).toContain('"version_policy":{"all":{}}');
  });
});

describe('validateModelConfig', () => {
  it('accepts the seed-style ensemble with dynamic_batching (pipeline batching)', () => {
    const c = load(`name: "e" platform: "ensemble" max_batch_size: 8 ${IO}
      ensemble_scheduling { step { model_name: "a" input_map { key: "i" value: "x" } output_map { key: "o" value: "y" } } }
      dynamic_batching { preferred_batch_size: [ 4, 8 ] }`);
    expect(() => validateModelConfig(c)).not.toThrow();
  });

  it('checks name, platform and backend', () => {
    expect(invalid('backend: "python"').message).toBe("model configuration must specify 'name'");
    expect(invalid('name: "m" platform: "nope"').message).toBe("unexpected platform type 'nope' for m");
    expect(invalid('name: "m" platform: "tensorflow_graphdef" backend: "onnxruntime"').message).toBe(
      "unexpected 'platform' and 'backend' pair, got:tensorflow_graphdef, onnxruntime",
    );
    expect(invalid(`name: "m" backend: "python" ${IO}`, { directoryName: 'n' }).message).toBe(
      "unexpected directory name 'n' for model 'm', directory name must equal model name",
    );
  });

  it('checks batching settings', () => {
    expect(invalid('name: "m" backend: "python" max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 8 ] }').message).toBe(
      'dynamic batching preferred size must be <= max batch size for m',
    );
    expect(invalid('name: "m" backend: "python" max_batch_size: 4 dynamic_batching { preferred_batch_size: [ 0 ] }').message).toBe(
      'dynamic batching preferred size must be positive for m',
    );
    expect(invalid('name: "m" backend: "python" max_batch_size: 4 sequence_batching { oldest { preferred_batch_size: 5 } }').message).toBe(
      'sequence batching preferred batch size must be <= max batch size for m',
    );
    expect(invalid('name: "m" backend: "python" sequence_batching { direct { minimum_slot_utilization: 1.5 } }').message).toBe(
      'sequence batching minimum slot utilization must be in range (0.0, 1.0] for m',
    );
    expect(
      invalid('name: "m" backend: "python" sequence_batching { control_input { name: "C" control { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } } }')
        .message,
    ).toBe(
      'unexpected data type for control CONTROL_SEQUENCE_CORRID for m. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING',
    );
    expect(
      invalid('name: "m" backend: "python" sequence_batching { control_input { name: "S" control { kind: CONTROL_SEQUENCE_START int32_false_true: [ 1 ] } } }')
        .message,
    ).toBe("sequence batching control 'int32_false_true' must have exactly 2 entries for CONTROL_SEQUENCE_START for m");
  });

  it('checks response cache and metrics settings', () => {
    expect(invalid('name: "m" backend: "python" sequence_batching { } response_cache { enable: true }').message).toBe(
      'Response Cache does not currently support model m with sequence batching scheduler. Please disable the response cache.',
    );
    expect(invalid('name: "m" backend: "python" model_transaction_policy { decoupled: true } response_cache { enable: true }').message).toBe(
      "Response Cache does not currently support model m with 'decoupled' transaction policy. Please disable the response cache.",
    );
    expect(invalid('name: "m" backend: "python" model_metrics { metric_control { metric_identifier { family: "f" } } }').message).toBe(
      "metric control must specify 'histogram_options'",
    );
  });

  it('checks instance groups against the GPUs present', () => {
    const gpuGroup = `name: "m" backend: "python" ${IO} instance_group { kind: KIND_GPU gpus: [ 0 ] }`;
    expect(() => validateModelConfig(load(gpuGroup)), 'no GPU inventory: the backend places KIND_GPU').not.toThrow();
    expect(invalid(gpuGroup, { supportedGpus: [] }).message).toBe(
      'instance group m_0 of model m specifies invalid or unsupported gpu id 0. GPUs with at least the minimum required CUDA compute compatibility of 6.000000 are: ',
    );
    expect(invalid(`name: "m" backend: "python" ${IO} instance_group { kind: KIND_GPU }`, { supportedGpus: [] }).message).toBe(
      'instance group m_0 of model m has kind KIND_GPU but no GPUs are available',
    );
    expect(invalid(`name: "m" backend: "python" ${IO} instance_group { kind: KIND_MODEL gpus: 0 }`).message).toBe(
      'instance group m_0 of model m has kind KIND_MODEL but specifies one or more GPUs',
    );
    expect(invalid(`name: "m" backend: "python" ${IO} instance_group { kind: KIND_CPU profile: "0" }`).message).toBe(
      'instance group m_0 of model m and platform specifies profile field which is only supported for TensorRT models',
    );
  });

  it('checks I/O and runtime', () => {
    expect(invalid('name: "m" backend: "python" input { name: "x" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3 ] }').message).toBe(
      'model input NHWC/NCHW require 3 dims for m',
    );
    expect(invalid('name: "m" backend: "python" input { name: "x" data_type: TYPE_FP32 dims: [ 1 ] is_shape_tensor: true }').message).toBe(
      'shape tensors are only supported for TensorRT platform for m',
    );
    expect(invalid('name: "m" backend: "python" output { data_type: TYPE_FP32 dims: [ 1 ] }').message).toBe(
      "model output must specify 'name' for m",
    );
    expect(invalid('name: "m" backend: "python" input { name: "x" data_type: TYPE_FP32 }').message).toBe(
      "model input 'x' must specify 'dims' for m",
    );
    expect(() => validateModelConfig(load(`name: "m" backend: "python" runtime: "model.ts" ${IO}`))).not.toThrow();
    expect(invalid(`name: "m" backend: "onnxruntime" runtime: "/abs/lib.so" ${IO}`).message).toBe(
      "backend library name '/abs/lib.so' escapes backend directory",
    );
  });

  it('carries the field path of the problem', () => {
    const e = invalid('name: "m" backend: "python" input [ { name: "a" data_type: TYPE_FP32 dims: 1 }, { name: "b" data_type: TYPE_FP32 dims: 0 } ]');
    expect(e.fieldPath).toBe('input[1].dims');
  });
});
