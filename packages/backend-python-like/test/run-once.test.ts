import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { runModelOnce, tensorFromJson } from '../src/index.ts';
import { FIXTURES } from './helpers.ts';

describe('runModelOnce (tritium model run)', () => {
  it('runs initialize + execute + finalize and returns JSON outputs', async () => {
    const result = await runModelOnce({ modelDir: path.join(FIXTURES, 'upper'), inputs: { TEXT: ['hi there'] } });
    expect(result).toEqual({
      model: 'upper',
      version: 1,
      responses: [
        {
          outputs: [
            { name: 'UPPER', datatype: 'BYTES', shape: [1, 1], data: ['HI THERE'] },
            { name: 'LENGTH', datatype: 'INT32', shape: [1, 1], data: [8] },
          ],
        },
      ],
    });
  });

  it('reports a load error as it is', async () => {
    await expect(runModelOnce({ modelDir: path.join(FIXTURES, 'py_only'), inputs: { X: [1] } })).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringContaining('model.py found but Tritium runs TypeScript models'),
    });
  });
});

describe('tensorFromJson', () => {
  const config = normalizeModelConfig(
    parseModelConfigText(`name: "m" backend: "python" max_batch_size: 4
      input [ { name: "IDS" data_type: TYPE_INT64 dims: [ -1 ] }, { name: "F" data_type: TYPE_FP32 dims: [ 2 ] } ]
      output [ { name: "O" data_type: TYPE_FP32 dims: [ 1 ] } ]`),
  );

  it('infers the shape and adds the batch dimension', () => {
    const t = tensorFromJson(config, 'IDS', [101, 2023, 102]);
    expect(t.shape).toEqual([1, 3]);
    expect(Array.from(new BigInt64Array(t.data.slice().buffer))).toEqual([101n, 2023n, 102n]);
    expect(tensorFromJson(config, 'F', [[1, 2], [3, 4]]).shape).toEqual([2, 2]);
    expect(tensorFromJson(config, 'F', { shape: [1, 2], data: [5, 6] }).shape).toEqual([1, 2]);
  });

  it('reads a flat array as the config implies: rows of fixed dims, one row of variable dims', () => {
    const text = normalizeModelConfig(
      parseModelConfigText(`name: "t" backend: "python" max_batch_size: 8
        input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }, { name: "P" data_type: TYPE_FP32 dims: [ 3 ] } ]
        output [ { name: "O" data_type: TYPE_FP32 dims: [ 1 ] } ]`),
    );
    // dims [1] with batching: two strings are two rows.
    expect(tensorFromJson(text, 'TEXT', ['a', 'b']).shape).toEqual([2, 1]);
    expect(tensorFromJson(text, 'TEXT', 'a').shape).toEqual([1, 1]);
    expect(tensorFromJson(text, 'TEXT', [['a'], ['b']]).shape).toEqual([2, 1]);
    expect(tensorFromJson(text, 'P', [1, 2, 3, 4, 5, 6]).shape).toEqual([2, 3]);
    expect(tensorFromJson(text, 'P', [1, 2, 3]).shape).toEqual([1, 3]);
    // Variable dims: the array is one row.
    expect(tensorFromJson(config, 'IDS', [1, 2]).shape).toEqual([1, 2]);
    // Values that fill no whole row stay as written (the server's check names what it expected).
    expect(tensorFromJson(text, 'P', [1, 2, 3, 4]).shape).toEqual([1, 4]);
    const unbatched = normalizeModelConfig(
      parseModelConfigText(`name: "u" backend: "python" max_batch_size: 0
        input [ { name: "X" data_type: TYPE_FP32 dims: [ 1, 2 ] } ] output [ { name: "O" data_type: TYPE_FP32 dims: [ 1 ] } ]`),
    );
    expect(tensorFromJson(unbatched, 'X', [1, 2]).shape).toEqual([1, 2]);
  });

  it('names the input and the problem on bad JSON values', () => {
    expect(() => tensorFromJson(config, 'NOPE', [1])).toThrow("unexpected inference input 'NOPE' for model 'm' (inputs: IDS, F)");
    expect(() => tensorFromJson(config, 'F', [[1, 2], [3]])).toThrow("input 'F': ragged nested array");
    expect(() => tensorFromJson(config, 'IDS', ['x'])).toThrow(`input 'IDS': element 0 ("x") is not a valid INT64 value`);
  });
});
