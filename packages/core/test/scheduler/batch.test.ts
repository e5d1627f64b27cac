import { describe, expect, it } from 'vitest';
import { InferError, decodeStrings, tensorFromStrings, tensorFromTyped, typedView } from '../../src/index.ts';
import { concatInputs, splitOutputs } from '../../src/backend/index.ts';
import { batchSizeOf } from '../../src/tensor/batch.ts';
import { encodePadValue } from '../../src/tensor/index.ts';
import { padBatch, padTensor, paddingSpecFromConfig, trimTensor, unpadResponse, unpaddingSpecFromConfig } from '../../src/tensor/pad.ts';
import type { InferRequest } from '../../src/index.ts';
import { config, input } from './helpers.ts';

function r(id: string, ...inputs: InferRequest['inputs']): InferRequest {
  return { id, model: 'm', inputs };
}
const f32 = (name: string, shape: number[], values: number[]) => tensorFromTyped(name, 'FP32', shape, new Float32Array(values));

describe('batch helpers', () => {
  it('concatenates along dim 0 into a fresh buffer and splits back by rows', () => {
    const a = r('a', f32('X', [1, 2], [1, 2]));
    const b = r('b', f32('X', [2, 2], [3, 4, 5, 6]));
    const x = concatInputs([a, b], 'X');
    expect(x.shape).toEqual([3, 2]);
    expect([...typedView(x)]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(x.data.buffer).not.toBe(a.inputs[0]!.data.buffer);
    expect(x.data.byteOffset).toBe(0);
    const [ra, rb] = splitOutputs([a, b], [{ ...x, name: 'Y' }], { model: 'm', version: 3 });
    expect(ra!.outputs[0]!.shape).toEqual([1, 2]);
    expect([...typedView(rb!.outputs[0]!)]).toEqual([3, 4, 5, 6]);
    expect(rb!.version).toBe(3);
    expect(rb!.id).toBe('b');
  });

  it('concatenates and splits BYTES elements', () => {
    const a = r('a', tensorFromStrings('S', [1], ['hello']));
    const b = r('b', tensorFromStrings('S', [2], ['', 'wörld']));
    const s = concatInputs([a, b], 'S');
    expect(s.shape).toEqual([3]);
    expect(decodeStrings(s.data)).toEqual(['hello', '', 'wörld']);
    const [, rb] = splitOutputs([a, b], [s], { model: 'm', version: 1 });
    expect(decodeStrings(rb!.outputs[0]!.data)).toEqual(['', 'wörld']);
  });

  it('gives each request only the outputs it asked for', () => {
    const a: InferRequest = { ...r('a', f32('X', [1], [1])), outputs: [{ name: 'B' }] };
    const b = r('b', f32('X', [1], [2]));
    const outs = [f32('A', [2], [1, 2]), f32('B', [2], [3, 4])];
    const [ra, rb] = splitOutputs([a, b], outs, { model: 'm', version: 1 });
    expect(ra!.outputs.map((o) => o.name)).toEqual(['B']);
    expect(rb!.outputs.map((o) => o.name)).toEqual(['A', 'B']);
  });

  it('rejects mismatched shapes and row counts', () => {
    const a = r('a', f32('X', [1, 2], [1, 2]));
    const b = r('b', f32('X', [1, 3], [1, 2, 3]));
    expect(() => concatInputs([a, b], 'X')).toThrow(/shape \[1,3\] does not match \[1,2\]/);
    expect(() => splitOutputs([a, b], [f32('Y', [3], [1, 2, 3])], { model: 'm', version: 1 })).toThrow(InferError);
  });

  it("computes batch size with Triton's errors", () => {
    const cfg = config({ input: [input('X', [2]), input('Z', [2])] });
    expect(batchSizeOf(r('a', f32('X', [3, 2], [1, 2, 3, 4, 5, 6])), cfg)).toBe(3);
    expect(() => batchSizeOf(r('a', f32('X', [1, 2], [1, 2]), f32('Z', [2, 2], [1, 2, 3, 4])), cfg)).toThrow(
      "input 'Z' batch size does not match other inputs for 'm'",
    );
    expect(() => batchSizeOf(r('a', f32('X', [9, 1], new Array(9).fill(0))), cfg)).toThrow(
      "inference request batch-size must be <= 8 for 'm'",
    );
    expect(batchSizeOf(r('a', f32('X', [9, 1], new Array(9).fill(0))), config({ max_batch_size: 0 }))).toBe(1);
  });

  it('pads every variable dim to the longest with the pad value', () => {
    const t = tensorFromTyped('IDS', 'INT64', [1, 2], new BigInt64Array([7n, 8n]));
    const padded = padTensor(t, [1, 4], encodePadValue('INT64', '-1'));
    expect([...typedView(padded)]).toEqual([7n, 8n, -1n, -1n]);
    const m = f32('M', [2, 2], [1, 2, 3, 4]);
    expect([...typedView(padTensor(m, [2, 3], encodePadValue('FP32', '0')))]).toEqual([1, 2, 0, 3, 4, 0]);
    const s = tensorFromStrings('S', [1, 1], ['a']);
    expect(decodeStrings(padTensor(s, [1, 3], encodePadValue('BYTES', '[PAD]')).data)).toEqual(['a', '[PAD]', '[PAD]']);
    expect(() => encodePadValue('INT32', 'x')).toThrow(/not a valid INT32/);
  });

  it('pads a batch per the tritium.pad.* parameters', () => {
    const cfg = config({
      input: [input('IDS', [-1], { data_type: 'TYPE_INT32' })],
      parameters: { 'tritium.pad.IDS': { string_value: '0' } },
    });
    const spec = paddingSpecFromConfig(cfg);
    const a = r('a', tensorFromTyped('IDS', 'INT32', [1, 1], new Int32Array([5])));
    const b = r('b', tensorFromTyped('IDS', 'INT32', [1, 3], new Int32Array([1, 2, 3])));
    const [pa, pb] = padBatch([a, b], spec);
    expect(pa!.inputs[0]!.shape).toEqual([1, 3]);
    expect([...typedView(pa!.inputs[0]!)]).toEqual([5, 0, 0]);
    expect(pb).toBe(b);
    expect(() => paddingSpecFromConfig(config({ parameters: { 'tritium.pad.NOPE': { string_value: '0' } } }))).toThrow(
      "parameter 'tritium.pad.NOPE' names unknown input 'NOPE' for 'm'",
    );
  });

  it('trims padded outputs back to each request (tritium.unpad.*)', () => {
    const m = f32('M', [2, 3], [1, 2, 0, 3, 4, 0]);
    expect([...typedView(trimTensor(m, [2, 2]))]).toEqual([1, 2, 3, 4]);
    const s = tensorFromStrings('S', [1, 3], ['a', 'b', 'pad']);
    expect(decodeStrings(trimTensor(s, [1, 2]).data)).toEqual(['a', 'b']);
    const cfg = config({
      input: [input('IDS', [-1])],
      output: [{ name: 'EMB', data_type: 'TYPE_FP32', dims: [-1, 2], label_filename: '', is_shape_tensor: false, is_non_linear_format_io: false }],
      parameters: { 'tritium.pad.IDS': { string_value: '0' }, 'tritium.unpad.EMB': { string_value: 'IDS' } },
    });
    const spec = unpaddingSpecFromConfig(cfg);
    expect([...spec]).toEqual([['EMB', 'IDS']]);
    const original = r('a', f32('IDS', [1, 1], [7]));
    const emb = f32('EMB', [1, 3, 2], [1, 1, 2, 2, 3, 3]);
    const trimmed = unpadResponse({ outputs: [emb] }, original, spec);
    expect(trimmed.outputs[0]!.shape).toEqual([1, 1, 2]);
    expect([...typedView(trimmed.outputs[0]!)]).toEqual([1, 1]);
    expect(() => unpaddingSpecFromConfig({ ...cfg, parameters: { 'tritium.unpad.EMB': { string_value: 'IDS' } } })).toThrow(
      "parameter 'tritium.unpad.EMB' names input 'IDS', which has no 'tritium.pad.IDS' for 'm'",
    );
  });
});
