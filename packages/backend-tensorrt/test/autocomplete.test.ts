import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, type ModelConfig } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { TrtShim, autoCompleteConfig, tensorrtBackend, validateEngineIo, type EngineInfo } from '../src/index.ts';
import { TempDir, buildDouble, captureLog, doubleEngine, writeModel } from './helpers.ts';

let dir: TempDir;
let shimPath: string;
beforeAll(() => {
  dir = new TempDir();
  shimPath = buildDouble(dir.root);
});
afterAll(() => dir.dispose());

function info(engine: string): EngineInfo {
  const e = TrtShim.load(shimPath).deserialize(new TextEncoder().encode(engine), 0);
  try {
    return e.info();
  } finally {
    e.destroy();
  }
}

const config = (text: string, name = 'm'): ModelConfig => ({ ...parseModelConfigText(text), name });
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return InferError.is(err) ? `${err.code}: ${err.message}` : String(err);
  }
  return 'no error';
};

/** Two profiles: max batch 8 (profile 0) and 16 (profile 1); length 1..32. */
const TWO_PROFILES = doubleEngine({
  profiles: 2,
  inputs: [
    { name: 'ids', type: 8, dims: [-1, -1], profiles: [[[1, 1], [4, 16], [8, 32]], [[1, 1], [8, 16], [16, 32]]] },
    { name: 'mask', type: 8, dims: [-1, -1], profiles: [[[1, 1], [4, 16], [8, 32]], [[1, 1], [8, 16], [16, 32]]] },
  ],
  outputs: [
    { name: 'logits', type: 0, dims: [-1, 2] },
    { name: 'score', type: 0, dims: [-1] },
  ],
  op: 'identity',
});

describe('auto-complete from the engine', () => {
  it('fills I/O (batch dim dropped, 1-D outputs as scalars with reshape), max batch from profile 0 and dynamic batching', () => {
    const log = captureLog();
    const out = autoCompleteConfig(config(''), info(TWO_PROFILES), log);
    expect(out.max_batch_size).toBe(8);
    expect(out.dynamic_batching).toBeDefined();
    expect(out.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['ids', 'TYPE_INT64', [-1]],
      ['mask', 'TYPE_INT64', [-1]],
    ]);
    expect(out.output.map((o) => [o.name, o.data_type, o.dims, o.reshape])).toEqual([
      ['logits', 'TYPE_FP32', [2], undefined],
      ['score', 'TYPE_FP32', [1], { shape: [] }],
    ]);
  });

  it('takes the largest max batch over the profiles the instance groups name', () => {
    const out = autoCompleteConfig(config('instance_group [{ profile: ["0", "1"] }]'), info(TWO_PROFILES), captureLog());
    expect(out.max_batch_size).toBe(16);
  });

  it('keeps a smaller configured max_batch_size and an existing scheduler; fills missing types of listed tensors', () => {
    const out = autoCompleteConfig(
      config('max_batch_size: 2\nsequence_batching {}\ninput [{ name: "ids" dims: [-1] }, { name: "mask" }]\noutput [{ name: "logits" data_type: TYPE_FP32 dims: [2] }]'),
      info(TWO_PROFILES),
      captureLog(),
    );
    expect(out.max_batch_size).toBe(2);
    expect(out.dynamic_batching).toBeUndefined();
    expect(out.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['ids', 'TYPE_INT64', [-1]],
      ['mask', 'TYPE_INT64', [-1]],
    ]);
  });

  it('does not batch an engine whose first dim is fixed, and warns when config dims hint no batching', () => {
    const fixed = doubleEngine({ inputs: [{ name: 'x', type: 0, dims: [4, 4] }], outputs: [{ name: 'y', type: 0, dims: [4, 4] }], op: 'identity' });
    const plain = autoCompleteConfig(config(''), info(fixed), captureLog());
    expect(plain.max_batch_size).toBe(0);
    expect(plain.input[0]!.dims).toEqual([4, 4]);
    const log = captureLog();
    const hinted = autoCompleteConfig(config('input [{ name: "ids" data_type: TYPE_INT64 dims: [1, -1] }]'), info(TWO_PROFILES), log);
    expect(hinted.max_batch_size).toBe(0);
    expect(log.lines).toContain('W The specified dimensions in model config for m hints that batching is unavailable');
  });

  it("fails with Triton's messages", () => {
    const fixed = doubleEngine({ inputs: [{ name: 'x', type: 0, dims: [4, 4] }], outputs: [{ name: 'y', type: 0, dims: [4, 4] }], op: 'identity' });
    expect(errorOf(() => autoCompleteConfig(config('max_batch_size: 9'), info(TWO_PROFILES), captureLog()))).toBe(
      "INTERNAL: autofill failed for model 'm': configuration specified max-batch 9 but TensorRT engine only supports max-batch 8",
    );
    expect(errorOf(() => autoCompleteConfig(config('input [{ name: "x" dims: [4] }]'), info(fixed), captureLog()))).toBe(
      "INTERNAL: autofill failed for model 'm': model tensor shape configuration hints for dynamic batching but the underlying engine doesn't support batching.",
    );
    expect(errorOf(() => autoCompleteConfig(config('instance_group [{ profile: ["2"] }]'), info(TWO_PROFILES), captureLog()))).toBe(
      "INTERNAL: unable to autofill for 'm', configuration specified invalid profile 2 . Number of profiles supported by TensorRT engine: 2",
    );
    expect(
      errorOf(() =>
        autoCompleteConfig(config('input [{ name: "ids" dims: [-1] }, { name: "mask" dims: [1, -1] }]'), info(TWO_PROFILES), captureLog()),
      ),
    ).toBe("INTERNAL: unable to autofill for 'm', model tensor configurations are contradicting each other in terms of whether batching is supported");
    expect(errorOf(() => autoCompleteConfig(config('input [{ name: "nope" dims: [1] }]'), info(TWO_PROFILES), captureLog()))).toBe(
      "INVALID_ARG: unexpected inference input 'nope', allowed inputs are: ids, mask",
    );
  });
});

describe('load-time validation against the engine', () => {
  const full = (text: string) => normalizeModelConfig({ ...config(text), backend: 'tensorrt' }, { modelName: 'm' });
  const io = `
    input [{ name: "ids" data_type: TYPE_INT64 dims: [-1] }, { name: "mask" data_type: TYPE_INT64 dims: [-1] }]
    output [{ name: "logits" data_type: TYPE_FP32 dims: [2] }, { name: "score" data_type: TYPE_FP32 dims: [1] reshape { shape: [] } }]`;

  it('accepts a config that matches', () => {
    expect(errorOf(() => validateEngineIo(full(`max_batch_size: 8 ${io}`), info(TWO_PROFILES), 0))).toBe('no error');
  });

  it("rejects wrong data types, dims, profile ranges and max_batch_size with Triton's messages", () => {
    const e = info(TWO_PROFILES);
    expect(errorOf(() => validateEngineIo(full(`max_batch_size: 8 ${io.replace('name: "ids" data_type: TYPE_INT64', 'name: "ids" data_type: TYPE_FP32')}`), e, 0))).toBe(
      "INVALID_ARG: unable to load model 'm', configuration expects datatype TYPE_FP32 for input 'ids', model provides TYPE_INT64",
    );
    expect(errorOf(() => validateEngineIo(full(`max_batch_size: 8 ${io.replace('dims: [2]', 'dims: [3]')}`), e, 0))).toBe(
      "INVALID_ARG: model 'm', tensor 'logits': the model expects 2 dimensions (shape [-1,2]) but the model configuration specifies 2 dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape [-1,3])",
    );
    expect(errorOf(() => validateEngineIo(full(`max_batch_size: 8 ${io.replace('name: "ids" data_type: TYPE_INT64 dims: [-1]', 'name: "ids" data_type: TYPE_INT64 dims: [64]')}`), e, 0))).toBe(
      "INVALID_ARG: unable to load model 'm', input 'ids': model expected the shape of dimension 0 to be between 1 and 32 but received 64",
    );
    expect(errorOf(() => validateEngineIo(full(`max_batch_size: 16 ${io}`), e, 0))).toBe(
      "INVALID_ARG: unable to load model 'm': configuration specified max-batch 16 but TensorRT engine only supports max-batch 8 (optimization profile 0)",
    );
    expect(errorOf(() => validateEngineIo(full(`max_batch_size: 16 ${io}`), e, 1))).toBe('no error');
  });
});

describe('backend entry points', () => {
  it('registers as tensorrt / tensorrt_plan / model.plan and auto-completes through the shim', async () => {
    const backend = tensorrtBackend({ shimPath });
    expect([backend.name, backend.platforms, backend.defaultModelFilename]).toEqual(['tensorrt', ['tensorrt_plan'], 'model.plan']);
    const { modelDir, versionDir } = writeModel(dir.root, 'auto', TWO_PROFILES);
    const out = await backend.autoComplete!({ config: config('', 'auto'), modelDir, versionDir, log: captureLog() });
    expect(out.max_batch_size).toBe(8);
  });

  it("reports a missing engine file with Triton's message and a corrupt one naming the file", async () => {
    const backend = tensorrtBackend({ shimPath });
    const missing = writeModel(dir.root, 'empty', undefined);
    await expect(backend.autoComplete!({ config: config('', 'empty'), ...missing, log: captureLog() })).rejects.toThrow(
      `unable to find '${missing.versionDir}/model.plan' for model instance 'empty'`,
    );
    const corrupt = writeModel(dir.root, 'corrupt', 'garbage');
    await expect(backend.autoComplete!({ config: config('', 'corrupt'), ...corrupt, log: captureLog() })).rejects.toThrow(
      `unable to load model 'corrupt': cannot deserialize TensorRT engine '${corrupt.versionDir}/model.plan': trt_engine_deserialize failed (RUNTIME): double: not a test-double engine`,
    );
  });
});
