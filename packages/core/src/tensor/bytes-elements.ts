/**
 * BYTES tensors in their wire layout (KServe's binary form): each element a u32 little-endian length
 * followed by its bytes, all elements in one buffer. A BYTES tensor stays in this layout from the
 * transport to the model and back, so it costs memory in proportion to its bytes: these helpers
 * count, index and build elements by walking the length prefixes, without an object per element.
 * Only `decodeBytesElements` / `decodeStrings` make one object per element, for code that asked for
 * them (a model's `strings()`, a backend whose library takes strings).
 */
import { InferError } from '../errors.ts';

/**
 * The little-endian u32 at `offset` of `data` (a BYTES element's length prefix; the caller checks
 * the 4 bytes are there). Read byte by byte: a DataView per tensor cost more than the walk itself
 * (~150 ns each, 32 of them per execute of 32 one-string requests).
 */
export function readU32LE(data: Uint8Array, offset: number): number {
  return (data[offset]! | (data[offset + 1]! << 8) | (data[offset + 2]! << 16)) + data[offset + 3]! * 0x1000000;
}

function truncated(name: string, offset: number): InferError {
  return new InferError('INVALID_ARG', `malformed BYTES data for '${name}': truncated length prefix at byte ${offset}`);
}

function runsPast(name: string, len: number, offset: number, size: number): InferError {
  return new InferError('INVALID_ARG', `malformed BYTES data for '${name}': element of ${len} bytes at byte ${offset} runs past the end (${size})`);
}

/**
 * The number of elements in BYTES data, walking the length prefixes (no object per element).
 * Throws INVALID_ARG on a malformed buffer.
 */
export function countBytesElements(data: Uint8Array, name = 'tensor'): number {
  const size = data.byteLength;
  // A DataView reads a prefix in half the time of four byte loads, but costs ~150 ns to make: worth it for large data only.
  const view = size > 4096 ? new DataView(data.buffer, data.byteOffset, size) : undefined;
  let offset = 0;
  let count = 0;
  while (offset < size) {
    if (offset + 4 > size) throw truncated(name, offset);
    const len = view ? view.getUint32(offset, true) : readU32LE(data, offset);
    if (offset + 4 + len > size) throw runsPast(name, len, offset, size);
    offset += 4 + len;
    count++;
  }
  return count;
}

/**
 * Where each element of BYTES data starts (at its length prefix), plus the end of the data as a last
 * entry: `count + 1` offsets in one typed array (4 bytes per element, never more than the data's own
 * 4-byte prefixes). Element `i` is `data.subarray(offsets[i] + 4, offsets[i + 1])`.
 */
export function bytesElementOffsets(data: Uint8Array, name = 'tensor'): Uint32Array {
  if (data.byteLength > 0xffffffff) throw new InferError('INVALID_ARG', `BYTES data for '${name}' is over 4 GiB`);
  const offsets = new Uint32Array(countBytesElements(data, name) + 1);
  let offset = 0;
  for (let i = 0; i < offsets.length - 1; i++) {
    offsets[i] = offset;
    offset += 4 + readU32LE(data, offset);
  }
  offsets[offsets.length - 1] = offset;
  return offsets;
}

/** Builds BYTES data one element at a time into one growing buffer (no array of encoded elements). */
export class BytesWriter {
  private buf: Buffer;
  private used = 0;

  constructor(capacity = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(16, capacity));
  }

  private reserve(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.used + n, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  /** Appends one element: a string (as UTF-8) or bytes. */
  add(element: string | Uint8Array): void {
    if (typeof element === 'string') {
      // A string of n UTF-16 units takes at most 3n bytes of UTF-8.
      this.reserve(4 + element.length * 3);
      const len = this.buf.write(element, this.used + 4, 'utf8');
      this.buf.writeUInt32LE(len, this.used);
      this.used += 4 + len;
      return;
    }
    this.reserve(4 + element.byteLength);
    this.buf.writeUInt32LE(element.byteLength, this.used);
    this.buf.set(element, this.used + 4);
    this.used += 4 + element.byteLength;
  }

  /** Appends the elements of BYTES data `[start, end)` as they are (their prefixes included). */
  addRaw(data: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    this.buf.set(data.subarray(start, end), this.used);
    this.used += end - start;
  }

  /** The data built, in a fresh ArrayBuffer of exactly its size. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.used);
    out.set(this.buf.subarray(0, this.used));
    return out;
  }
}

/** Serializes BYTES elements: u32 LE length + bytes each. */
export function encodeBytesElements(elements: readonly (string | Uint8Array)[]): Uint8Array {
  let total = 0;
  for (const e of elements) total += 4 + (typeof e === 'string' ? Buffer.byteLength(e, 'utf8') : e.byteLength);
  const writer = new BytesWriter(total);
  for (const e of elements) writer.add(e);
  return writer.finish();
}

/**
 * Splits a BYTES tensor's data into its elements (views, no copy): one object per element, for
 * code that asked for them. Throws INVALID_ARG on a malformed buffer.
 */
export function decodeBytesElements(data: Uint8Array, name = 'tensor'): Uint8Array[] {
  const out: Uint8Array[] = [];
  let offset = 0;
  while (offset < data.byteLength) {
    if (offset + 4 > data.byteLength) throw truncated(name, offset);
    const len = readU32LE(data, offset);
    const start = offset + 4;
    if (start + len > data.byteLength) throw runsPast(name, len, offset, data.byteLength);
    out.push(data.subarray(start, start + len));
    offset = start + len;
  }
  return out;
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** Decodes BYTES elements as UTF-8 strings; invalid UTF-8 is INVALID_ARG. */
export function decodeStrings(data: Uint8Array, name = 'tensor'): string[] {
  return decodeBytesElements(data, name).map((e) => {
    try {
      return utf8Strict.decode(e);
    } catch {
      throw new InferError('INVALID_ARG', `invalid UTF-8 in BYTES element of '${name}'`);
    }
  });
}
