import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped, typedView, type InferResponse, type Tensor } from '@tritium/core';
import { requestTag, type ExecuteResult } from '@tritium/core/backend';
import { createScheduler } from '@tritium/core/scheduler';
// Tests generate their models with the workspace's ONNX generator (a tool, not a runtime dependency).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { buildAddSubModel, buildBertModel, buildNoBatchModel, buildScalarModel, buildSequenceModel } from '@tritium/onnx-gen';
import { captureLog, loadModel, request, signal, TempRepo, type Loaded } from './helpers.ts';

const BATCH_NOTE =
  ' NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.';

function ok(result: ExecuteResult | undefined): InferResponse {
  if (result === undefined || InferError.is(result)) throw new Error(`expected a response, got ${String((result as InferError)?.message)}`);
  return result as InferResponse;
}

function out(response: InferResponse, name: string): Tensor {
  const t = response.outputs.find((o) => o.name === name);
  if (!t) throw new Error(`no output ${name}`);
  return t;
}

/** A tensor's elements as a plain array (numbers, or bigints for 64-bit integers). */
const values = (t: Tensor) => Array.from(typedView(t) as ArrayLike<number | bigint>);
const int32 = (name: string, shape: number[], values: number[]) => tensorFromTyped(name, 'INT32', shape, Int32Array.from(values));
const int64 = (name: string, shape: number[], values: number[]) =>
  tensorFromTyped(name, 'INT64', shape, BigInt64Array.from(values.map((v) => BigInt(v))));
const range = (n: number, start = 0) => Array.from({ length: n }, (_, i) => start + i);

let repo: TempRepo;
beforeAll(async () => {
  repo = await TempRepo.create();
});
afterAll(async () => {
  await repo.dispose();
});

describe('add/sub (auto-completed, batched across requests)', () => {
  let m: Loaded;
  beforeAll(async () => {
    m = await loadModel(repo, 'simple', buildAddSubModel(), '');
  });
  afterAll(() => m.dispose());

  it('auto-completes the config from the model', () => {
    expect(m.config.max_batch_size).toBe(4);
    expect(m.config.dynamic_batching).toBeDefined();
    expect(m.config.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['INPUT0', 'TYPE_INT32', [16]],
      ['INPUT1', 'TYPE_INT32', [16]],
    ]);
  });

  it('concatenates requests, splits rows back, returns only requested outputs', async () => {
    const a = request('simple', [int32('INPUT0', [1, 16], range(16)), int32('INPUT1', [1, 16], Array(16).fill(1))]);
    const b = request('simple', [int32('INPUT0', [2, 16], range(32, 100)), int32('INPUT1', [2, 16], Array(32).fill(2))], ['OUTPUT1']);
    const { results, timings } = await m.instance.execute([a, b], signal());
    const ra = ok(results[0]);
    expect(ra.outputs.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(values(out(ra, 'OUTPUT0'))).toEqual(range(16, 1));
    expect(values(out(ra, 'OUTPUT1'))).toEqual(range(16, -1));
    const rb = ok(results[1]);
    expect(rb.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(out(rb, 'OUTPUT1').shape).toEqual([2, 16]);
    expect(values(out(rb, 'OUTPUT1'))).toEqual(range(32, 98));
    const t = timings!;
    expect(t.computeInferNs).toBeGreaterThan(0);
    expect(t.computeInputNs).toBeGreaterThanOrEqual(0);
    expect(t.computeOutputNs).toBeGreaterThanOrEqual(0);
  });

  it('fails only the request with a wrong datatype, shape or byte size, naming model and tensor', async () => {
    const good = request('simple', [int32('INPUT0', [1, 16], range(16)), int32('INPUT1', [1, 16], range(16))]);
    const badType = request('simple', [
      tensorFromTyped('INPUT0', 'FP32', [1, 16], new Float32Array(16)),
      int32('INPUT1', [1, 16], range(16)),
    ]);
    const badShape = request('simple', [int32('INPUT0', [1, 15], range(15)), int32('INPUT1', [1, 15], range(15))]);
    const badBytes = request('simple', [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(60) }, int32('INPUT1', [1, 16], range(16))]);
    const tooBig = request('simple', [int32('INPUT0', [5, 16], range(80)), int32('INPUT1', [5, 16], range(80))]);
    const missing = request('simple', [int32('INPUT0', [1, 16], range(16))]);
    const results = (await m.instance.execute([good, badType, badShape, badBytes, tooBig, missing], signal())).results;
    expect(values(out(ok(results[0]), 'OUTPUT0'))).toEqual(range(16).map((v) => 2 * v));
    const messages = results.slice(1).map((r) => (InferError.is(r) ? `${r.code}: ${r.message}` : 'response'));
    // Core's request rules and messages, exactly as the server answers them.
    expect(messages).toEqual([
      `INVALID_ARG: ${requestTag(badType)}inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'`,
      `INVALID_ARG: ${requestTag(badShape)}unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15].${BATCH_NOTE}`,
      `INVALID_ARG: ${requestTag(badBytes)}input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60`,
      `INVALID_ARG: ${requestTag(tooBig)}inference request batch-size must be <= 4 for 'simple'`,
      `INVALID_ARG: ${requestTag(missing)}expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], but missing required input(s) ['INPUT1']. Please provide all required input(s).`,
    ]);
  });
});

describe('int64 sequence model (dynamic batch and sequence axes)', () => {
  let m: Loaded;
  beforeAll(async () => {
    m = await loadModel(repo, 'seq', buildSequenceModel(), 'max_batch_size: 8');
  });
  afterAll(() => m.dispose());

  it('batches requests of equal length together and different lengths separately', async () => {
    const a = request('seq', [int64('input_ids', [1, 3], [1, 2, 3])]);
    const b = request('seq', [int64('input_ids', [2, 3], [10, 20, 30, 40, 50, 60])]);
    const c = request('seq', [int64('input_ids', [1, 5], [1, 1, 1, 1, 1])], ['row_sum']);
    const results = ((await m.instance.execute([a, b, c], signal())).results).map(ok);
    expect(values(out(results[0]!, 'doubled'))).toEqual([2n, 4n, 6n]);
    expect(out(results[1]!, 'doubled').shape).toEqual([2, 3]);
    expect(values(out(results[1]!, 'row_sum'))).toEqual([60n, 150n]);
    expect(results[2]!.outputs.map((o) => [o.name, o.shape])).toEqual([['row_sum', [1, 1]]]);
    expect(values(out(results[2]!, 'row_sum'))).toEqual([5n]);
  });
  it('serves concurrent requests through the dynamic batcher (createScheduler)', async () => {
    expect(m.config.dynamic_batching).toBeDefined();
    const scheduler = createScheduler(m.config, {
      modelName: 'seq',
      version: 1,
      instances: [m.instance],
      infer: () => Promise.reject(new Error('no nested inference')),
    });
    try {
      const lengths = [3, 3, 5, 3, 5, 3, 4];
      const responses = await Promise.all(
        lengths.map((n, i) => scheduler.enqueue(request('seq', [int64('input_ids', [1, n], range(n, i))]))),
      );
      responses.forEach((r, i) => {
        const n = lengths[i]!;
        expect(values(out(r, 'doubled'))).toEqual(range(n, i).map((v) => BigInt(2 * v)));
        expect(values(out(r, 'row_sum'))).toEqual([BigInt(range(n, i).reduce((a, b) => a + b, 0))]);
      });
    } finally {
      await scheduler.stop();
    }
  });
});

describe('model shapes without batching', () => {
  it('serves a fixed-first-dim model with max_batch_size 0', async () => {
    const m = await loadModel(repo, 'nobatch', buildNoBatchModel(), '');
    try {
      expect(m.config.max_batch_size).toBe(0);
      const r = ok(((await m.instance.execute([request('nobatch', [int32('INPUT0', [16], range(16)), int32('INPUT1', [16], range(16))])], signal())).results)[0]);
      expect(out(r, 'OUTPUT1').shape).toEqual([16]);
      expect(values(out(r, 'OUTPUT1'))).toEqual(Array(16).fill(0));
    } finally {
      await m.dispose();
    }
  });

  it('serves scalar I/O as dims [1] with reshape []', async () => {
    const m = await loadModel(repo, 'scalar', buildScalarModel(), '');
    try {
      expect(m.config.input[0]).toMatchObject({ dims: [1], reshape: { shape: [] } });
      expect(m.config.output[0]).toMatchObject({ dims: [1], reshape: { shape: [] } });
      const r = ok(((await m.instance.execute([request('scalar', [tensorFromTyped('INPUT0', 'FP32', [1], Float32Array.of(3.5))])], signal())).results)[0]);
      expect(out(r, 'OUTPUT0').shape).toEqual([1]);
      expect(values(out(r, 'OUTPUT0'))).toEqual([7]);
    } finally {
      await m.dispose();
    }
  });
});

describe('BERT-shaped encoder', () => {
  it('runs batched, matches per-request runs, and is deterministic', async () => {
    const bytes = buildBertModel({ vocabSize: 64, hidden: 16, layers: 2, heads: 2, maxPosition: 16, seed: 3, names: { inputIds: 'INPUT_IDS', attentionMask: 'ATTENTION_MASK', logits: 'LOGITS' } });
    const m = await loadModel(repo, 'bert', bytes, 'max_batch_size: 8');
    try {
      expect(m.config.output[0]).toMatchObject({ name: 'LOGITS', data_type: 'TYPE_FP32', dims: [2] });
      const req = (ids: number[], mask: number[]) => request('bert', [int64('INPUT_IDS', [1, ids.length], ids), int64('ATTENTION_MASK', [1, mask.length], mask)]);
      const a = req([1, 5, 9, 2], [1, 1, 1, 1]);
      const b = req([1, 7, 2, 0], [1, 1, 1, 0]);
      const batched = ((await m.instance.execute([a, b], signal())).results).map(ok);
      const alone = ok(((await m.instance.execute([b], signal())).results)[0]);
      const again = ((await m.instance.execute([a, b], signal())).results).map(ok);
      const logits = (r: InferResponse) => Array.from(typedView(out(r, 'LOGITS')) as Float32Array);
      expect(out(batched[0]!, 'LOGITS').shape).toEqual([1, 2]);
      logits(alone).forEach((v, i) => expect(v).toBeCloseTo(logits(batched[1]!)[i]!, 5));
      expect(logits(again[0]!)).toEqual(logits(batched[0]!));
      expect(logits(batched[0]!)).not.toEqual(logits(batched[1]!));
    } finally {
      await m.dispose();
    }
  });
});

describe('KIND_GPU without a usable GPU', () => {
  it('falls back to CPU with a warning naming the fallback', async () => {
    const log = captureLog();
    const m = await loadModel(repo, 'gpu_fallback', buildAddSubModel(), '', { kind: 'GPU', log });
    try {
      expect(log.lines.some((l) => l.startsWith('W') && l.includes('KIND_GPU') && l.includes('falling back to the CPU execution provider'))).toBe(true);
      const r = (await m.instance.execute([request('gpu_fallback', [int32('INPUT0', [1, 16], range(16)), int32('INPUT1', [1, 16], range(16))])], signal())).results;
      expect(InferError.is(r[0])).toBe(false);
    } finally {
      await m.dispose();
    }
  });

  it('fails with a clear message under strict GPU placement', async () => {
    await expect(loadModel(repo, 'gpu_strict', buildAddSubModel(), '', { kind: 'GPU', backend: { strictGpu: true } })).rejects.toThrow(
      /model 'gpu_strict' instance 'gpu_strict_0' needs a GPU \(KIND_GPU\)/,
    );
  });
});
