/**
 * Real config.pbtxt files from public repositories (real-configs/, each naming its source), read as
 * `tritium serve` reads a config: parse → normalize → validate. Each either loads, with the values
 * Triton's normalization gives it, or is refused with the error Triton gives (protobuf's text-format
 * message for a parse error, at the same line and column).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { ConfigError, normalizeModelConfig, parseModelConfigText, validateModelConfig } from '../../src/config/index.ts';
import type { ModelConfig } from '../../src/index.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'real-configs');

/** The config as the repository would hold it for folder `modelName` (no model files). */
function load(file: string, modelName: string): ModelConfig {
  const text = readFileSync(path.join(DIR, file), 'utf8');
  const config = normalizeModelConfig(parseModelConfigText(text, { file }), { modelName });
  validateModelConfig(config);
  return config;
}

function refusal(file: string, modelName: string): InferError {
  try {
    load(file, modelName);
  } catch (e) {
    expect(InferError.is(e), String(e)).toBe(true);
    return e as InferError;
  }
  throw new Error(`${file} loaded; it must be refused`);
}

describe('real configs: unfilled tensorrtllm_backend templates fail to parse as in Triton', () => {
  // Triton: "Error parsing text-format inference.ModelConfig: 5:17: Expected integer, got: $"
  // (protobuf prints the token's own text after "got:"), then "failed to read text proto".
  it('max_batch_size: ${triton_max_batch_size}', () => {
    const e = refusal('trtllm-ensemble-template.pbtxt', 'ensemble') as ConfigError;
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.code).toBe('INVALID_ARG');
    expect([e.line, e.column, e.reason]).toEqual([5, 17, 'Expected integer, got: $']);
    expect(e.message).toBe('trtllm-ensemble-template.pbtxt:5:17: Expected integer, got: $');
  });

  it('decoupled: ${decoupled_mode} (a bool reads an identifier or 0/1)', () => {
    const e = refusal('trtllm-bls-decoupled-template.pbtxt', 'tensorrt_llm_bls') as ConfigError;
    expect([e.line, e.column, e.reason]).toEqual([8, 14, 'Expected identifier, got: $']);
  });

  it('data_type: ${logits_datatype}', () => {
    const e = refusal('trtllm-logits-datatype-template.pbtxt', 'tensorrt_llm') as ConfigError;
    expect([e.line, e.column, e.reason]).toEqual([9, 16, 'Expected integer or identifier, got: $']);
  });
});

describe('real configs that Triton loads', () => {
  it('DeepLearningExamples kaldi_online: oldest strategy, list-style controls, a `,` after a block', () => {
    const c = load('kaldi-online.pbtxt', 'kaldi_online');
    expect(c.model_transaction_policy?.decoupled).toBe(true);
    expect(c.sequence_batching?.max_sequence_idle_microseconds).toBe(5000000);
    expect(c.sequence_batching?.oldest?.preferred_batch_size).toEqual([600]);
    expect(c.sequence_batching?.control_input.map((ci) => [ci.name, ci.control[0]!.kind])).toEqual([
      ['START', 'CONTROL_SEQUENCE_START'],
      ['CORRID', 'CONTROL_SEQUENCE_CORRID'],
    ]);
    expect(c.parameters.lattice_postprocessor_rxfilename).toEqual({ string_value: '' });
    expect(c.instance_group).toEqual([expect.objectContaining({ name: 'kaldi_online_0', kind: 'KIND_GPU', count: 1, gpus: [] })]);
  });

  it('server L0_implicit_state no_state_update: state with initial_state', () => {
    const c = load('implicit-state.pbtxt', 'no_state_update');
    const state = c.sequence_batching!.state[0]!;
    expect([state.input_name, state.output_name, state.dims]).toEqual(['INPUT_STATE', 'OUTPUT_STATE', [1]]);
    expect(state.initial_state[0]).toMatchObject({ name: 'state init', data_type: 'TYPE_INT32', dims: [1], zero_data: true });
    expect(c.sequence_batching!.max_sequence_idle_microseconds).toBe(1_000_000);
  });

  it('tutorials ORT_TRT: warmup, graph level, accelerator parameters; ONNX Runtime CPU default of 2 instances', () => {
    const c = load('ort-trt-accelerator.pbtxt', 'text_recognition');
    expect(c.platform).toBe('onnxruntime_onnx');
    expect(c.default_model_filename).toBe('model.onnx');
    expect(c.model_warmup[0]!.inputs['input.1']).toMatchObject({ dims: [1, 32, 100], zero_data: true });
    expect(c.optimization?.graph?.level).toBe(1);
    expect(c.optimization?.execution_accelerators?.gpu_execution_accelerator).toEqual([
      { name: 'tensorrt', parameters: { precision_mode: 'FP16', max_workspace_size_bytes: '1073741824' } },
    ]);
    expect(c.instance_group).toEqual([expect.objectContaining({ name: 'text_recognition', kind: 'KIND_CPU', count: 2 })]);
  });

  it('server openai mock_llm: no name, KIND_MODEL, optional input', () => {
    const c = load('mock-llm-kind-model.pbtxt', 'mock_llm');
    expect(c.name).toBe('mock_llm');
    expect(c.default_model_filename).toBe('model.py');
    expect(c.input[1]).toMatchObject({ name: 'return_logprobs', optional: true });
    expect(c.instance_group).toEqual([expect.objectContaining({ name: 'mock_llm_0', kind: 'KIND_MODEL', count: 1 })]);
  });
});

describe('real configs that Triton refuses, with its message', () => {
  it('pytriton full_config: platform "tensorrt" is no platform', () => {
    expect(refusal('pytriton-full-config.pbtxt', 'simple').message).toBe("unexpected platform type 'tensorrt' for simple");
  });
});
