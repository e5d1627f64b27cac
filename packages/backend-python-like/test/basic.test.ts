import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStrings, tensorFromStrings } from '@tritium/core';
import { asFloat32, asInt32, fp32, loadFixture, ok, request, run, type Loaded } from './helpers.ts';

describe('model.ts through the backend SPI', () => {
  let upper: Loaded;
  let addSub: Loaded;
  beforeAll(async () => {
    [upper, addSub] = await Promise.all([loadFixture('upper'), loadFixture('add_sub')]);
  });
  afterAll(async () => {
    await Promise.all([upper?.dispose(), addSub?.dispose()]);
  });

  it('runs a seed-style model per request, with local imports and only the requested outputs', async () => {
    const results = await run(upper.instances[0]!, [
      request('upper', 'a', [tensorFromStrings('TEXT', [2, 1], ['hello', 'wörld'])]),
      request('upper', 'b', [tensorFromStrings('TEXT', [1, 1], ['x'])], undefined, ['LENGTH']),
    ]);
    const a = ok(results[0]);
    expect(a.id).toBe('a');
    expect(a.outputs.map((t) => t.name)).toEqual(['UPPER', 'LENGTH']);
    expect(decodeStrings(a.outputs[0]!.data)).toEqual(['HELLO', 'WÖRLD']);
    expect(a.outputs[0]!.shape).toEqual([2, 1]);
    expect(asInt32(a.outputs[1])).toEqual([5, 5]);
    const b = ok(results[1]);
    expect(b.outputs.map((t) => t.name)).toEqual(['LENGTH']);
    expect(asInt32(b.outputs[0])).toEqual([1]);
  });

  it("runs Triton's add_sub example translated line by line", async () => {
    const [r] = await run(addSub.instances[0]!, [
      request('add_sub', 'r', [fp32('INPUT0', [1, 2, 3, 4]), fp32('INPUT1', [0.5, 0.5, 1, 1])]),
    ]);
    const res = ok(r);
    expect(res.outputs[0]!.datatype).toBe('FP32');
    expect(asFloat32(res.outputs[0])).toEqual([1.5, 2.5, 4, 5]);
    expect(asFloat32(res.outputs[1])).toEqual([0.5, 1.5, 2, 3]);
  });
});
