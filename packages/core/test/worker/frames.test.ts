/**
 * The process channel's framing (frames.ts): what a child writes is read by the host itself, so
 * any split of the bytes decodes, and no bytes a child can write make the reader throw or hold
 * more than its bound.
 */
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader } from '../../src/worker/frames.ts';

function reader(max = 1 << 20) {
  const messages: unknown[] = [];
  const errors: string[] = [];
  return { r: new FrameReader(max, (m) => messages.push(m), (e) => errors.push(e)), messages, errors };
}

describe('FrameReader', () => {
  const frames = [{ t: 'a', data: new Uint8Array([1, 2, 3]) }, { t: 'b', n: 7 }, 'x'.repeat(1000)];
  const bytes = Buffer.concat(frames.map(encodeFrame));

  it('decodes frames however the bytes are split (one byte at a time, or all at once)', () => {
    const bySplit = [1, 3, 5, bytes.length].map((step) => {
      const { r, messages, errors } = reader();
      for (let i = 0; i < bytes.length; i += step) r.push(bytes.subarray(i, i + step));
      expect(errors).toEqual([]);
      return messages;
    });
    for (const messages of bySplit) expect(messages).toEqual(frames);
  });

  it('refuses a frame over its bound at the header, once, and ignores what follows', () => {
    const { r, messages, errors } = reader(100);
    const header = Buffer.from([0x7f, 0xff, 0xff, 0xff]);
    r.push(header);
    r.push(Buffer.alloc(1000));
    r.push(encodeFrame('late'));
    expect(errors).toEqual([`announced a message of ${2 ** 31 - 1} bytes, over the channel's bound of 100`]);
    expect(messages).toEqual([]);
  });

  it('reports a body that does not decode, without throwing', () => {
    const { r, messages, errors } = reader();
    r.push(Buffer.concat([encodeFrame(1), Buffer.from([0, 0, 0, 4, 0xde, 0xad, 0xbe, 0xef]), encodeFrame(2)]));
    expect(messages).toEqual([1]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^wrote a message that does not decode \(/);
  });
});
