/**
 * The classification extension picks the top k of each row without an object per element or a
 * sort of the whole row: classification 1 of a 4M-element output (16 MB, any client may send it to
 * an identity model) must not hold the main thread for seconds.
 */
import { describe, expect, it } from 'vitest';
import type { DataType, InferResponse, Tensor } from '@tritium/core';
import { decodeBytesElements } from '@tritium/core/tensor';
import { applyClassification } from '../src/protocol/classification.ts';

function classifyOutput(datatype: DataType, data: ArrayBufferView, shape: number[], k: number, maxBatchSize: number): { shape: number[]; strings: string[] } {
  const output: Tensor = { name: 'O', datatype, shape, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  const response = { id: '', model: 'm', version: 1, outputs: [output] } as InferResponse;
  const t = applyClassification(response, [{ name: 'O', parameters: { classification: k } }], maxBatchSize).outputs[0]!;
  return { shape: [...t.shape], strings: decodeBytesElements(t.data, 'O').map((b) => Buffer.from(b).toString()) };
}

/** The rule written out plainly: highest value first, lower index on ties, NaN below every number (printed as C's "%f" prints it). */
function reference(values: number[], rows: number, k: number): string[] {
  const per = values.length / rows;
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const row = values.slice(r * per, (r + 1) * per).map((v, i) => ({ v, i }));
    row.sort((a, b) => (Number.isNaN(a.v) ? (Number.isNaN(b.v) ? a.i - b.i : 1) : Number.isNaN(b.v) ? -1 : b.v - a.v || a.i - b.i));
    for (const { v, i } of row.slice(0, k)) out.push(`${Number.isNaN(v) ? 'nan' : v.toFixed(6)}:${i}`);
  }
  return out;
}

describe('classification', () => {
  it('matches the plain rule on random rows with ties, NaN and every k', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 200; trial++) {
      const rows = 1 + (trial % 3);
      const per = 1 + Math.floor(rand() * 40);
      const values = Array.from({ length: rows * per }, () => (rand() < 0.1 ? NaN : Math.floor(rand() * 8) / 2));
      const k = 1 + Math.floor(rand() * (per + 2));
      const got = classifyOutput('FP64', Float64Array.from(values), [rows, per], k, 8);
      expect(got.shape).toEqual([rows, Math.min(k, per)]);
      expect(got.strings).toEqual(reference(values, rows, k));
    }
    const ints = classifyOutput('INT64', BigInt64Array.of(5n, -2n, 9n, 9n), [4], 3, 0);
    expect(ints).toEqual({ shape: [3], strings: ['9:2', '9:3', '5:0'] });
  });

  it('top 1 of a 4M-element output takes well under a second of CPU (it took 7.7 s on the main thread)', () => {
    const n = 4_000_000;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = (i * 7919) % 1000003;
    const cpu = process.cpuUsage();
    const got = classifyOutput('FP32', data, [1, n], 1, 8);
    const { user, system } = process.cpuUsage(cpu);
    expect(got.strings).toEqual([`1000002.000000:${data.indexOf(1000002)}`]);
    expect((user + system) / 1e6).toBeLessThan(1.5);
  });
});
