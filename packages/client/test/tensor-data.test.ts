/** Typed views of output bytes, by the datatype a server names. */
import { describe, expect, it } from 'vitest';
import { viewAs } from '../src/tensor-data.ts';
import type { Datatype } from '../src/index.ts';

describe('viewAs', () => {
  it('views bytes as the datatype names them', () => {
    const bytes = new Uint8Array(new Float32Array([1.5, -2]).buffer);
    expect(Array.from(viewAs('FP32', bytes))).toEqual([1.5, -2]);
    expect(() => viewAs('INT32', bytes.subarray(0, 6))).toThrow('6 bytes is not a whole number of INT32 elements');
  });

  it.each(['constructor', 'toString', '__proto__', 'FP33'])("refuses the datatype '%s', which is not in the table", (name) => {
    expect(() => viewAs(name as Datatype, new Uint8Array(8))).toThrow(`unknown datatype '${name}'`);
  });
});
