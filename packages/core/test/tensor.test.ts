import { describe, expect, it } from 'vitest';
import { decodeStrings, typedView, tensorFromTyped, InferError } from '../src/index.ts';
import { BytesWriter, countBytesElements, encodeBytesElements, decodeBytesElements } from '../src/tensor/index.ts';
import { bytesElementOffsets } from '../src/tensor/bytes-elements.ts';

describe('tensor helpers', () => {
  it('round-trips BYTES elements in the KServe layout', () => {
    const data = encodeBytesElements(['hello', '', 'wörld']);
    expect(Array.from(data.subarray(0, 4))).toEqual([5, 0, 0, 0]);
    expect(decodeStrings(data)).toEqual(['hello', '', 'wörld']);
  });

  it('rejects a truncated BYTES buffer with INVALID_ARG naming the tensor', () => {
    const data = encodeBytesElements(['abc']).subarray(0, 5);
    expect(() => decodeBytesElements(data, 'TEXT')).toThrow(/malformed BYTES data for 'TEXT'/);
    try {
      decodeBytesElements(data, 'TEXT');
    } catch (e) {
      expect(InferError.is(e) && e.code).toBe('INVALID_ARG');
    }
  });

  it('counts and indexes BYTES elements by their length prefixes, refusing a malformed buffer as decoding does', () => {
    const data = encodeBytesElements(['ab', '', 'ü']);
    expect(countBytesElements(data)).toBe(3);
    expect(Array.from(bytesElementOffsets(data))).toEqual([0, 6, 10, 16]);
    expect(countBytesElements(new Uint8Array(4 * 1000))).toBe(1000);
    expect(() => countBytesElements(data.subarray(0, 7), 'TEXT')).toThrow("malformed BYTES data for 'TEXT': truncated length prefix at byte 6");
    expect(() => countBytesElements(data.subarray(0, 5), 'TEXT')).toThrow("malformed BYTES data for 'TEXT': element of 2 bytes at byte 0 runs past the end (5)");
  });

  it('BytesWriter builds the same bytes as encodeBytesElements, one element at a time', () => {
    const w = new BytesWriter(1);
    for (const e of ['x'.repeat(300), '', 'wörld😀', new Uint8Array([0, 255])]) w.add(e);
    const raw = encodeBytesElements(['tail']);
    w.addRaw(raw, 0, raw.byteLength);
    const out = w.finish();
    expect(out).toEqual(encodeBytesElements(['x'.repeat(300), '', 'wörld😀', new Uint8Array([0, 255]), 'tail']));
    expect(out.byteOffset === 0 && out.buffer.byteLength === out.byteLength).toBe(true);
  });

  it('rejects invalid UTF-8', () => {
    const data = encodeBytesElements([new Uint8Array([0xff, 0xfe])]);
    expect(() => decodeStrings(data, 'TEXT')).toThrow(/invalid UTF-8/);
  });

  it('views aligned data without copying and copies unaligned data', () => {
    const t = tensorFromTyped('x', 'FP32', [2], new Float32Array([1.5, -2]));
    const view = typedView(t);
    expect(view.buffer).toBe(t.data.buffer);
    const unaligned = new Uint8Array(9);
    unaligned.set(t.data, 1);
    expect(Array.from(typedView({ ...t, data: unaligned.subarray(1) }) as Float32Array)).toEqual([1.5, -2]);
  });
});
