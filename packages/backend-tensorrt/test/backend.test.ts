import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, tensorFromTyped, typedView, type InferResponse, type Tensor } from '@tritium/core';
import { requestTag, type ExecuteOutput, type ExecuteResult } from '@tritium/core/backend';
import { TempDir, buildDouble, doubleEngine, loadModel, request, signal, type Loaded } from './helpers.ts';

const BATCH_NOTE =
  ' NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.';

function ok(result: ExecuteResult | undefined): InferResponse {
  if (result === undefined || InferError.is(result)) throw new Error(`expected a response, got ${String((result as InferError)?.message)}`);
  return result as InferResponse;
}
const out = (r: InferResponse, name: string): Tensor => r.outputs.find((o) => o.name === name)!;
const values = (t: Tensor) => Array.from(typedView(t) as ArrayLike<number | bigint>);
const fp32 = (name: string, shape: number[], v: number[]) => tensorFromTyped(name, 'FP32', shape, Float32Array.from(v));
const int32 = (name: string, shape: number[], v: number[]) => tensorFromTyped(name, 'INT32', shape, Int32Array.from(v));
const range = (n: number, start = 0) => Array.from({ length: n }, (_, i) => start + i);
const message = (r: ExecuteResult | undefined) => (InferError.is(r) ? `${r.code}: ${r.message}` : 'response');

let dir: TempDir;
let shimPath: string;
beforeAll(() => {
  dir = new TempDir();
  shimPath = buildDouble(dir.root);
});
afterAll(() => dir.dispose());

/** add: [-1,-1] FP32 inputs; profile 0 allows batch 1..4 and length 2..8. */
const ADD = doubleEngine({
  inputs: [
    { name: 'X', type: 0, dims: [-1, -1], profiles: [[[1, 2], [2, 4], [4, 8]]] },
    { name: 'Y', type: 0, dims: [-1, -1], profiles: [[[1, 2], [2, 4], [4, 8]]] },
  ],
  outputs: [{ name: 'Z', type: 0, dims: [-1, -1] }],
  op: 'add',
});

describe('add engine with dynamic batch and length (thread isolation)', () => {
  let m: Loaded;
  beforeAll(async () => {
    m = await loadModel(dir.root, 'add', ADD, '', { shimPath, isolation: 'thread' });
  });
  afterAll(() => m.dispose());

  it('auto-completes max_batch_size from the profile and turns on dynamic batching', () => {
    expect(m.config.max_batch_size).toBe(4);
    expect(m.config.dynamic_batching).toBeDefined();
    expect(m.config.input.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['X', 'TYPE_FP32', [-1]],
      ['Y', 'TYPE_FP32', [-1]],
    ]);
    expect(m.config.output.map((o) => [o.name, o.data_type, o.dims])).toEqual([['Z', 'TYPE_FP32', [-1]]]);
  });

  it('concatenates requests of one length, runs other lengths apart, splits rows back', async () => {
    const a = request('add', [fp32('X', [1, 3], [1, 2, 3]), fp32('Y', [1, 3], [10, 10, 10])]);
    const b = request('add', [fp32('X', [2, 3], range(6)), fp32('Y', [2, 3], range(6))]);
    const c = request('add', [fp32('X', [1, 5], range(5)), fp32('Y', [1, 5], Array(5).fill(1))]);
    const output = await m.instance.execute([a, b, c], signal());
    const results = output.results.map(ok);
    expect(values(out(results[0]!, 'Z'))).toEqual([11, 12, 13]);
    expect(out(results[1]!, 'Z').shape).toEqual([2, 3]);
    expect(values(out(results[1]!, 'Z'))).toEqual([0, 2, 4, 6, 8, 10]);
    expect(out(results[2]!, 'Z').shape).toEqual([1, 5]);
    expect(values(out(results[2]!, 'Z'))).toEqual([1, 2, 3, 4, 5]);
    expect(output.timings?.computeInferNs).toBeGreaterThan(0);
  });

  it('cuts a batch larger than the profile allows into runs that fit', async () => {
    const batch = range(3).map((k) => request('add', [fp32('X', [2, 2], range(4, 10 * k)), fp32('Y', [2, 2], [0, 0, 0, 0])]));
    const results = ((await m.instance.execute(batch, signal())).results).map(ok);
    expect(results.map((r) => values(out(r, 'Z')))).toEqual([range(4, 0), range(4, 10), range(4, 20)]);
  });

  it('fails only the requests with a shape outside the profile, a wrong datatype or size', async () => {
    const good = request('add', [fp32('X', [1, 2], [1, 2]), fp32('Y', [1, 2], [3, 4])]);
    const tooLong = request('add', [fp32('X', [1, 9], range(9)), fp32('Y', [1, 9], range(9))]);
    const tooShort = request('add', [fp32('X', [1, 1], [1]), fp32('Y', [1, 1], [1])]);
    const badType = request('add', [int32('X', [1, 2], [1, 2]), fp32('Y', [1, 2], [3, 4])]);
    const badRank = request('add', [fp32('X', [1, 2, 1], [1, 2]), fp32('Y', [1, 2], [3, 4])]);
    const tooBig = request('add', [fp32('X', [5, 2], range(10)), fp32('Y', [5, 2], range(10))]);
    const results = (await m.instance.execute([good, tooLong, tooShort, badType, badRank, tooBig], signal())).results;
    expect(values(out(ok(results[0]), 'Z'))).toEqual([4, 6]);
    expect(results.slice(1).map(message)).toEqual([
      "INVALID_ARG: request specifies invalid shape for input 'X' for add_0. Error details: model expected the shape of dimension 1 to be between 2 and 8 but received 9",
      "INVALID_ARG: request specifies invalid shape for input 'X' for add_0. Error details: model expected the shape of dimension 1 to be between 2 and 8 but received 1",
      `INVALID_ARG: ${requestTag(badType)}inference input 'X' data-type is 'INT32', but model 'add' expects 'FP32'`,
      `INVALID_ARG: ${requestTag(badRank)}unexpected shape for input 'X' for model 'add'. Expected [-1,-1], got [1,2,1].${BATCH_NOTE}`,
      `INVALID_ARG: ${requestTag(tooBig)}inference request batch-size must be <= 4 for 'add'`,
    ]);
  });
});

describe('engine ops and failures', () => {
  it('applies core request rules, optional inputs included, and refuses to leave an engine input unbound', async () => {
    const config = `max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "Y" data_type: TYPE_FP32 dims: [ -1 ] optional: true } ]
output [ { name: "Z" data_type: TYPE_FP32 dims: [ -1 ] } ]`;
    const m = await loadModel(dir.root, 'opt', ADD, config, { shimPath, isolation: 'thread' });
    try {
      const noY = request('opt', [fp32('X', [1, 2], [1, 2])]);
      const noX = request('opt', [fp32('Y', [1, 2], [1, 2])]);
      const both = request('opt', [fp32('X', [1, 2], [1, 2]), fp32('Y', [1, 2], [3, 4])]);
      const { results } = await m.instance.execute([noY, noX, both], signal());
      expect(results.slice(0, 2).map(message)).toEqual([
        `INVALID_ARG: ${requestTag(noY)}input 'Y' is optional for model 'opt', but its TensorRT engine needs every input bound; send it`,
        `INVALID_ARG: ${requestTag(noX)}expected number of inputs between 1 and 2 but got 1 inputs for model 'opt'. Got input(s) ['Y'], but missing required input(s) ['X']. Please provide all required input(s).`,
      ]);
      expect(values(out(ok(results[2]), 'Z'))).toEqual([4, 6]);
    } finally {
      await m.dispose();
    }
  });

  it('serves a non-batching engine (fixed first dim) with max_batch_size 0', async () => {
    const engine = doubleEngine({ inputs: [{ name: 'IN', type: 3, dims: [3] }], outputs: [{ name: 'OUT', type: 3, dims: [3] }], op: 'identity' });
    const m = await loadModel(dir.root, 'fixed', engine, '', { shimPath, isolation: 'thread' });
    try {
      expect(m.config.max_batch_size).toBe(0);
      expect(m.config.dynamic_batching).toBeUndefined();
      expect(m.config.input[0]).toMatchObject({ name: 'IN', data_type: 'TYPE_INT32', dims: [3] });
      const r = ok(((await m.instance.execute([request('fixed', [int32('IN', [3], [7, 8, 9])])], signal())).results)[0]);
      expect(out(r, 'OUT').shape).toEqual([3]);
      expect(values(out(r, 'OUT'))).toEqual([7, 8, 9]);
    } finally {
      await m.dispose();
    }
  });

  it('serves per-row scalars as config dims [1] with reshape [] (engine shape [batch])', async () => {
    const engine = doubleEngine({
      inputs: [{ name: 'S', type: 0, dims: [-1], profiles: [[[1], [2], [4]]] }],
      outputs: [{ name: 'T', type: 0, dims: [-1] }],
      op: 'scale 3',
    });
    const m = await loadModel(dir.root, 'scalar', engine, '', { shimPath, isolation: 'thread' });
    try {
      expect(m.config.input[0]).toMatchObject({ dims: [1], reshape: { shape: [] } });
      const results = ((await m.instance.execute([request('scalar', [fp32('S', [2, 1], [1, 2])]), request('scalar', [fp32('S', [1, 1], [5])])], signal())).results).map(ok);
      expect(results.map((r) => [out(r, 'T').shape, values(out(r, 'T'))])).toEqual([
        [[2, 1], [3, 6]],
        [[1, 1], [15]],
      ]);
    } finally {
      await m.dispose();
    }
  });

  it('scales with the engine op and returns only the requested outputs', async () => {
    const engine = doubleEngine({
      inputs: [{ name: 'IN', type: 0, dims: [-1, 2], profiles: [[[1, 2], [1, 2], [8, 2]]] }],
      outputs: [{ name: 'OUT', type: 0, dims: [-1, 2] }],
      op: 'scale 2.5',
    });
    const m = await loadModel(dir.root, 'scale', engine, 'max_batch_size: 2', { shimPath, isolation: 'thread' });
    try {
      expect(m.config.max_batch_size).toBe(2);
      const r = ok(((await m.instance.execute([request('scale', [fp32('IN', [1, 2], [2, 4])], ['OUT'])], signal())).results)[0]);
      expect(values(out(r, 'OUT'))).toEqual([5, 10]);
    } finally {
      await m.dispose();
    }
  });

  it('turns a failing enqueue into INTERNAL for that batch; the instance keeps serving', async () => {
    const engine = doubleEngine({ inputs: [{ name: 'IN', type: 0, dims: [-1, 1] }], outputs: [{ name: 'OUT', type: 0, dims: [-1, 1] }], op: 'fail' });
    const m = await loadModel(dir.root, 'failing', engine, 'max_batch_size: 4', { shimPath, isolation: 'thread' });
    try {
      for (let i = 0; i < 2; i++) {
        const results = (await m.instance.execute([request('failing', [fp32('IN', [1, 1], [1])])], signal())).results;
        expect(message(results[0])).toBe(
          "INTERNAL: TensorRT error for model 'failing' instance 'failing_0': trt_context_enqueue failed (RUNTIME): double: enqueueV3 failed (op 'fail')",
        );
      }
    } finally {
      await m.dispose();
    }
  });
});

describe('a crashing engine call (process isolation)', () => {
  it('fails only that instance’s requests, restarts the instance, and other instances keep serving', async () => {
    const crash = doubleEngine({ inputs: [{ name: 'IN', type: 0, dims: [-1, 1] }], outputs: [{ name: 'OUT', type: 0, dims: [-1, 1] }], op: 'crash' });
    const fine = doubleEngine({ inputs: [{ name: 'IN', type: 0, dims: [-1, 1] }], outputs: [{ name: 'OUT', type: 0, dims: [-1, 1] }], op: 'identity' });
    const options = { shimPath, restart: { initialBackoffMs: 10, maxBackoffMs: 50, maxRestarts: 5 } };
    const crashing = await loadModel(dir.root, 'crashing', crash, 'max_batch_size: 4', options);
    const healthy = await loadModel(dir.root, 'healthy', fine, 'max_batch_size: 4', options);
    try {
      const req = (model: string) => request(model, [fp32('IN', [1, 1], [42])]);
      const [crashed, served] = await Promise.all([
        crashing.instance.execute([req('crashing'), req('crashing')], signal()).then(
          () => undefined,
          (err: unknown) => err,
        ),
        healthy.instance.execute([req('healthy')], signal()),
      ]);
      // Rejecting fails every request of the crashed batch (INTERNAL, naming the instance).
      expect(InferError.is(crashed)).toBe(true);
      expect((crashed as InferError).code).toBe('INTERNAL');
      expect((crashed as InferError).message).toMatch(/^model 'crashing' instance 'crashing_0' crashed: worker process killed by SIGABRT/);
      expect(values(out(ok((served as ExecuteOutput).results[0]), 'OUT'))).toEqual([42]);
      // The crashed instance comes back (a fresh child) and crashes again on the next call: it did restart.
      const again = await crashing.instance.execute([req('crashing')], signal()).then(
        () => 'served',
        (err: InferError) => err.code,
      );
      expect(again).toBe('INTERNAL');
      expect((crashing.instance as { restarts?: number }).restarts).toBeGreaterThanOrEqual(1);
      expect(values(out(ok(((await healthy.instance.execute([req('healthy')], signal())).results)[0]), 'OUT'))).toEqual([42]);
    } finally {
      await crashing.dispose();
      await healthy.dispose();
    }
  });
});
