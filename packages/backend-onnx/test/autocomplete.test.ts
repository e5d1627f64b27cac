import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, type ModelConfig } from '@tritium/core';
import { parseModelConfigText } from '@tritium/core/config';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildAddSubModel, buildScalarModel, buildSequenceModel } from '@tritium/onnx-gen';
import { autoCompleteConfig, onnxBackend, parseModelIo } from '../src/index.ts';
import { captureLog, TempRepo } from './helpers.ts';

const config = (text: string, name = 'm'): ModelConfig => ({ ...parseModelConfigText(text), name });

describe('autoCompleteConfig (Triton ORT rules)', () => {
  it('fills max_batch_size with the default and warns as Triton does, adding dynamic_batching', () => {
    const log = captureLog();
    const out = autoCompleteConfig(config(''), parseModelIo(buildAddSubModel(), 'm', 'p'), log);
    expect(out.max_batch_size).toBe(4);
    expect(out.dynamic_batching).toBeDefined();
    expect(log.lines).toContain(
      "W autofilled max_batch_size to 4 for model 'm' since batching is supporrted but no max_batch_size is specified in model configuration. Must specify max_batch_size to utilize autofill with a larger max batch size",
    );
  });

  it('keeps an explicit max_batch_size and an existing scheduler; max_batch_size 1 adds no batcher', () => {
    const io = parseModelIo(buildSequenceModel(), 'm', 'p');
    expect(autoCompleteConfig(config('max_batch_size: 1'), io, captureLog()).dynamic_batching).toBeUndefined();
    const seq = autoCompleteConfig(config('max_batch_size: 8\nsequence_batching {}'), io, captureLog());
    expect(seq.dynamic_batching).toBeUndefined();
    expect(seq.output.map((o) => [o.name, o.data_type, o.dims])).toEqual([
      ['doubled', 'TYPE_INT64', [-1]],
      ['row_sum', 'TYPE_INT64', [1]],
    ]);
  });

  it('fills only what is missing and skips when inputs and outputs are both given', () => {
    const io = parseModelIo(buildAddSubModel(), 'm', 'p');
    const partial = autoCompleteConfig(config('max_batch_size: 2\ninput [{ name: "INPUT0", data_type: TYPE_INT32, dims: [16] }]'), io, captureLog());
    expect(partial.input.map((i) => i.name)).toEqual(['INPUT0']);
    expect(partial.output.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    const log = captureLog();
    const full = config('input [{ name: "A", data_type: TYPE_FP32, dims: [1] }]\noutput [{ name: "B", data_type: TYPE_FP32, dims: [1] }]');
    expect(autoCompleteConfig(full, io, log)).toEqual(full);
    expect(log.lines).toContain("I skipping model configuration auto-complete for 'm': inputs and outputs already specified");
  });

  it('refuses a non-zero max_batch_size for a model that cannot batch', () => {
    const io = parseModelIo(buildScalarModel(), 'm', 'p');
    const error = (() => {
      try {
        autoCompleteConfig(config('max_batch_size: 2'), io, captureLog());
      } catch (e) {
        return e;
      }
    })();
    expect(InferError.is(error) && error.code).toBe('INVALID_ARG');
    expect((error as Error).message).toBe("autofill failed for model 'm': model does not support batching while non-zero max_batch_size is specified");
  });
});

describe('onnxBackend().autoComplete', () => {
  let repo: TempRepo;
  beforeAll(async () => {
    repo = await TempRepo.create();
  });
  afterAll(() => repo.dispose());

  it('reads default-max-batch-size from the backend config (--backend-config=onnxruntime,default-max-batch-size=8)', async () => {
    const { modelDir, versionDir } = await repo.model('m', buildAddSubModel());
    const out = await onnxBackend().autoComplete!({ config: config(''), modelDir, versionDir, log: captureLog(), backendConfig: { 'default-max-batch-size': '8' } });
    expect(out.max_batch_size).toBe(8);
    const option = await onnxBackend({ defaultMaxBatchSize: 0 }).autoComplete!({ config: config(''), modelDir, versionDir, log: captureLog() });
    expect([option.max_batch_size, option.dynamic_batching]).toEqual([0, undefined]);
  });

  it('reports a missing model file with Triton\'s message', async () => {
    const { modelDir, versionDir } = await repo.model('empty', undefined);
    await expect(onnxBackend().autoComplete!({ config: config('', 'empty'), modelDir, versionDir, log: captureLog() })).rejects.toThrow(
      /^unable to find '.*empty\/1\/model\.onnx' for model instance 'empty'$/,
    );
  });
});
