import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError } from '@tritium/core';
import { FIXTURES, asFloat32, asInt32, int32, loadFixture, ok, request, run, type Loaded } from './helpers.ts';

function err(result: unknown): InferError {
  if (!InferError.is(result)) throw new Error(`expected an error, got ${JSON.stringify(result)}`);
  return result;
}

describe('execute results', () => {
  let m: Loaded;
  beforeAll(async () => {
    m = await loadFixture('faulty');
  });
  afterAll(async () => {
    await m?.dispose();
  });
  const exec = (batch: Parameters<typeof run>[1]) => run(m.instances[0]!, batch);

  it('splits ONE response for the whole batch by rows', async () => {
    const results = await exec([
      request('faulty', 'a', [int32('X', [1, 2])], { mode: 'whole' }),
      request('faulty', 'b', [int32('X', [3])], { mode: 'whole' }, ['Y']),
      request('faulty', 'c', [int32('X', [4, 5, 6])], { mode: 'whole' }, ['Z']),
    ]);
    expect(asInt32(ok(results[0]).outputs[0])).toEqual([10, 20]);
    expect(ok(results[0]).outputs.map((t) => t.name)).toEqual(['Y', 'Z']);
    expect(ok(results[1]).outputs.map((t) => t.name)).toEqual(['Y']);
    expect(asInt32(ok(results[1]).outputs[0])).toEqual([30]);
    expect(ok(results[2]).outputs[0]!.shape).toEqual([3, 1]);
    expect(asFloat32(ok(results[2]).outputs[0])).toEqual([40, 50, 60]);
    // The one response's parameters reach every request's response.
    expect(results.map((r) => ok(r).parameters)).toEqual([0, 1, 2].map(() => ({ rows: 6, note: 'whole' })));
  });

  it('splits ONE response for requests that all want every output, each request its own rows, ids and outputs', async () => {
    const results = await exec([
      request('faulty', 'a', [int32('X', [1, 2])], { mode: 'whole' }),
      request('faulty', 'b', [int32('X', [3])], { mode: 'whole' }),
      request('faulty', 'c', [int32('X', [4, 5, 6])], { mode: 'whole' }),
    ]);
    expect(results.map((r) => ok(r).id)).toEqual(['a', 'b', 'c']);
    expect(results.map((r) => ok(r).outputs.map((t) => `${t.name}[${t.shape.join(',')}]`))).toEqual([
      ['Y[2,1]', 'Z[2,1]'],
      ['Y[1,1]', 'Z[1,1]'],
      ['Y[3,1]', 'Z[3,1]'],
    ]);
    expect(results.map((r) => asInt32(ok(r).outputs[0]))).toEqual([[10, 20], [30], [40, 50, 60]]);
    expect(asFloat32(ok(results[2]).outputs[1])).toEqual([40, 50, 60]);
    expect(results.map((r) => ok(r).parameters)).toEqual([0, 1, 2].map(() => ({ rows: 6, note: 'whole' })));
  });

  it('leaves a model the arrays it returned for the whole batch: large ones are copied, not transferred', async () => {
    // Twice: a transferred (detached) array would come back empty the second time.
    for (let call = 0; call < 2; call++) {
      const results = await exec([request('faulty', 'a', [int32('X', [1])], { mode: 'whole_kept' }), request('faulty', 'b', [int32('X', [2])])]);
      expect(results.map((r) => asInt32(ok(r).outputs[0]))).toEqual([[7], [8]]);
      expect(results.map((r) => ok(r).outputs[1]!.shape)).toEqual([
        [1, 20_000],
        [1, 20_000],
      ]);
      expect(asFloat32(ok(results[1]).outputs[1]).every((v) => v === 0.5)).toBe(true);
    }
  });

  it('leaves a model the arrays it returned per request: large ones are copied, not transferred', async () => {
    for (let call = 0; call < 2; call++) {
      const results = await exec([request('faulty', 'a', [int32('X', [1])], { mode: 'kept' }), request('faulty', 'b', [int32('X', [2])])]);
      expect(results.map((r) => asInt32(ok(r).outputs[0]))).toEqual([[9], [9]]);
      for (const r of results) expect(asFloat32(ok(r).outputs[1]).every((v) => v === 0.25)).toBe(true);
      expect(ok(results[1]).outputs[1]!.shape).toEqual([1, 20_000]);
    }
  });

  it('rejects a whole-batch response whose rows do not add up, saying what was expected', async () => {
    const batch = [request('faulty', 'a', [int32('X', [1])], { mode: 'whole_wrong' }), request('faulty', 'b', [int32('X', [2])])];
    await expect(exec(batch)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringContaining(
        "model 'faulty' execute returned 1 response for 2 requests whose output 'Y' has first dimension 3; expected 2 (one per request) or 1 whose outputs' first dimension equals the batch total 2",
      ),
    });
  });

  it('rejects the wrong number of responses', async () => {
    const batch = [request('faulty', 'a', [int32('X', [1])], { mode: 'wrong_count' }), request('faulty', 'b', [int32('X', [2])])];
    await expect(exec(batch)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: "model 'faulty' execute returned 3 responses for 2 requests; expected 2 (one per request) or 1 whose outputs' first dimension equals the batch total 2",
    });
  });

  it('fails only the request whose response carries an error, with its code', async () => {
    const results = await exec([
      request('faulty', 'a', [int32('X', [1])]),
      request('faulty', 'b', [int32('X', [2])], { mode: 'fail' }),
      request('faulty', 'c', [int32('X', [3])]),
    ]);
    expect(asInt32(ok(results[0]).outputs[0])).toEqual([1]);
    expect(err(results[1])).toMatchObject({ code: 'INVALID_ARG', message: 'bad request b' });
    expect(asInt32(ok(results[2]).outputs[0])).toEqual([3]);
  });

  it('checks output datatype and shape against the config, naming model, output, expected and actual', async () => {
    const results = await exec([
      request('faulty', 'a', [int32('X', [1])], { mode: 'wrong_dtype' }, ['Y']),
      request('faulty', 'b', [int32('X', [1, 2])], { mode: 'wrong_shape' }, ['Y']),
      request('faulty', 'c', [int32('X', [1])], { mode: 'wrong_dtype' }, ['Z']),
    ]);
    expect(err(results[0])).toMatchObject({
      code: 'INTERNAL',
      message: "model 'faulty': output 'Y' has datatype FP32, expected INT32 (config TYPE_INT32)",
    });
    expect(err(results[1]).message).toBe("model 'faulty': output 'Y' has shape [2,2], expected [2,1] (batch 2, config dims [1])");
    expect(err(results[2]).message).toContain("model 'faulty': output 'Y' has datatype FP32");
  });

  it('a thrown Error fails the batch INTERNAL with the source-mapped model.ts line', async () => {
    const source = readFileSync(path.join(FIXTURES, 'faulty/1/model.ts'), 'utf8').split('\n');
    const line = source.findIndex((l) => l.includes('THROW_LINE')) + 1;
    const failure = await exec([request('faulty', 'a', [int32('X', [1])], { mode: 'throw' })]).catch((e: unknown) => e);
    expect(err(failure).code).toBe('INTERNAL');
    expect(err(failure).message).toContain("Failed to process the request(s) for model instance 'faulty_0_0', message: Error: boom from model.ts");
    expect(err(failure).message).toContain(`${path.join(FIXTURES, 'faulty/1/model.ts')}:${line}:`);
    // The instance is fine afterwards.
    expect(asInt32(ok((await exec([request('faulty', 'b', [int32('X', [7])])]))[0]).outputs[0])).toEqual([7]);
  });

  it('a thrown TritonError keeps its code and message', async () => {
    const failure = await exec([request('faulty', 'a', [int32('X', [1])], { mode: 'throw_triton' })]).catch((e: unknown) => e);
    expect(err(failure)).toMatchObject({ code: 'INVALID_ARG', message: 'rejected by the model' });
  });
});
