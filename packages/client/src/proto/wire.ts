/**
 * A minimal protobuf wire-format reader and writer, just enough for the inference messages. It
 * exists for speed: `bytes` fields come back as views into the received buffer (no copy) and
 * nothing builds per-element objects.
 */

/** Malformed protobuf input (truncated, bad wire type, overlong varint). */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

export const WT_VARINT = 0;
export const WT_I64 = 1;
export const WT_LEN = 2;
export const WT_I32 = 5;

const TWO_32 = 4294967296;

export class ProtoReader {
  pos: number;
  readonly end: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  private fail(what: string): never {
    throw new WireFormatError(`malformed protobuf: ${what} at byte ${this.pos}`);
  }

  /** A varint as an unsigned 32-bit number (higher bits are dropped, as protobuf does for int32). */
  uint32(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail('truncated varint');
      const b = this.buf[this.pos++]!;
      if (shift < 32) result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
    }
    return this.fail('varint longer than 10 bytes');
  }

  /** A varint as a signed 32-bit number (int32 fields). */
  int32(): number {
    return this.uint32() | 0;
  }

  /** A 64-bit varint: a number when it fits in 2^53, a bigint beyond. `signed` for int64 fields. */
  varint64(signed: boolean): number | bigint {
    let lo = 0;
    let hi = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail('truncated varint');
      const b = this.buf[this.pos++]!;
      const bits = b & 0x7f;
      if (shift < 28) lo |= bits << shift;
      else if (shift === 28) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >> 4;
      } else hi |= bits << (shift - 32);
      if ((b & 0x80) === 0) {
        lo >>>= 0;
        hi >>>= 0;
        if (signed && hi & 0x80000000) {
          const v = (BigInt(hi) << 32n) | BigInt(lo);
          const s = BigInt.asIntN(64, v);
          return s >= -9007199254740991n ? Number(s) : s;
        }
        if (hi < 0x200000) return hi * TWO_32 + lo;
        return (BigInt(hi) << 32n) | BigInt(lo);
      }
      shift += 7;
    }
    return this.fail('varint longer than 10 bytes');
  }

  bool(): boolean {
    return this.uint32() !== 0;
  }

  double(): number {
    if (this.pos + 8 > this.end) this.fail('truncated double');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  float(): number {
    if (this.pos + 4 > this.end) this.fail('truncated float');
    const v = this.buf.readFloatLE(this.pos);
    this.pos += 4;
    return v;
  }

  /** Length of a length-delimited field, checked against the remaining bytes. */
  private length(): number {
    const len = this.uint32();
    if (len > this.end - this.pos) this.fail(`length ${len} runs past the end`);
    return len;
  }

  /** A `bytes` field as a view into the message buffer (no copy). */
  bytes(): Buffer {
    const len = this.length();
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  /**
   * Skips a `bytes` field and returns its length: the bytes are `buf[pos - length, pos)`. For a
   * caller that copies them elsewhere without a view per field.
   */
  skipBytes(): number {
    const len = this.length();
    this.pos += len;
    return len;
  }

  string(): string {
    const len = this.length();
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  /** A reader over an embedded message. */
  sub(): ProtoReader {
    const len = this.length();
    const r = new ProtoReader(this.buf, this.pos, this.pos + len);
    this.pos += len;
    return r;
  }

  /** Reads a field key; returns [field number, wire type]. */
  tag(): [number, number] {
    const key = this.uint32();
    const field = key >>> 3;
    if (field === 0) this.fail('field number 0');
    return [field, key & 7];
  }

  skip(wireType: number): void {
    switch (wireType) {
      case WT_VARINT:
        this.varint64(false);
        return;
      case WT_I64:
        if (this.pos + 8 > this.end) this.fail('truncated fixed64');
        this.pos += 8;
        return;
      case WT_LEN: {
        // Read the length first: `this.pos += this.length()` would add to the pre-varint position.
        const len = this.length();
        this.pos += len;
        return;
      }
      case WT_I32:
        if (this.pos + 4 > this.end) this.fail('truncated fixed32');
        this.pos += 4;
        return;
      default:
        this.fail(`unsupported wire type ${wireType}`);
    }
  }

  /** Reads a repeated scalar field, packed or not, calling `each` per element. */
  repeated(wireType: number, elementWireType: number, each: (r: ProtoReader) => void): void {
    if (wireType === WT_LEN && elementWireType !== WT_LEN) {
      const r = this.sub();
      while (!r.done) each(r);
    } else if (wireType === elementWireType) {
      each(this);
    } else {
      this.fail(`wire type ${wireType} where ${elementWireType} was expected`);
    }
  }

  expect(wireType: number, expected: number): void {
    if (wireType !== expected) this.fail(`wire type ${wireType} where ${expected} was expected`);
  }
}

/** An append-only writer; `finish()` returns the bytes written (one allocation per growth step). */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initial = 256) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  uint32(v: number): void {
    this.ensure(5);
    v >>>= 0;
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** Any integer as a 64-bit varint (negative numbers in two's complement, 10 bytes). */
  varint64(v: number | bigint): void {
    if (typeof v === 'number' && v >= 0 && v <= 0xffffffff) {
      this.uint32(v);
      return;
    }
    let big = BigInt.asUintN(64, BigInt(v));
    this.ensure(10);
    while (big > 0x7fn) {
      this.buf[this.pos++] = Number(big & 0x7fn) | 0x80;
      big >>= 7n;
    }
    this.buf[this.pos++] = Number(big);
  }

  tag(field: number, wireType: number): void {
    this.uint32((field << 3) | wireType);
  }

  /** A `string` field; an empty string is skipped unless `always` (a oneof member must be seen). */
  string(field: number, s: string, always = false): void {
    if (s === '' && !always) return;
    const len = Buffer.byteLength(s);
    this.tag(field, WT_LEN);
    this.uint32(len);
    this.ensure(len);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** A `bytes` field; written even when empty when `always` (repeated entries keep their index). */
  bytes(field: number, b: Uint8Array, always = false): void {
    if (b.byteLength === 0 && !always) return;
    this.tag(field, WT_LEN);
    this.uint32(b.byteLength);
    this.ensure(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
  }

  /** Bytes with no tag or length (the caller wrote them). */
  raw(b: Uint8Array): void {
    this.ensure(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
  }

  bool(field: number, v: boolean): void {
    if (!v) return;
    this.tag(field, WT_VARINT);
    this.uint32(1);
  }

  double(field: number, v: number): void {
    this.tag(field, WT_I64);
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A packed repeated int64 field. */
  packedInt64(field: number, values: readonly (number | bigint)[]): void {
    if (values.length === 0) return;
    const inner = new ProtoWriter(values.length * 2 + 8);
    for (const v of values) inner.varint64(v);
    this.bytes(field, inner.finish());
  }

  /** An embedded message written by `fill` (always emitted, even when empty: map values need it). */
  message(field: number, fill: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter(64);
    fill(inner);
    this.bytes(field, inner.finish(), true);
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * Walks the top-level fields of a message, checking wire types and lengths (protobufjs's reader
 * silently truncates an overlong string); throws WireFormatError on malformed input.
 */
export function checkWireFormat(buf: Buffer): void {
  const r = new ProtoReader(buf);
  while (!r.done) {
    const [, wt] = r.tag();
    r.skip(wt);
  }
}
