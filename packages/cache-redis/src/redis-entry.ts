/**
 * How a cached response is laid out in Redis, as Triton's redis cache lays it out: one hash per
 * key, four fields per buffer `i` (`i:b` the bytes, `i:s` their size, `i:t` the memory type, 0 for
 * CPU, `i:i` the memory type id). Buffer 0 holds the outputs packed as Triton's cache entry does
 * (little-endian: u32 output count, then per output u64 packed size, u32 name length, name, u32
 * datatype length, datatype, u32 shape byte length, i64 dims, u64 data length, data). Buffer 1,
 * present only when the response has parameters, holds them as JSON (Triton caches none).
 *
 * Decoding trusts nothing it reads: every length is checked against the bytes there, every tensor
 * against its datatype and shape; anything else is refused (the caller counts it as a miss).
 */
import { isDataType, type Parameters, type ParameterValue, type Tensor } from '@tritium/core';
import { countBytesElements, expectedByteSize } from '@tritium/core/tensor';
import type { CachedResponse } from '@tritium/core/cache';

export class RedisEntryError extends Error {}

const FIELDS_PER_BUFFER = 4;
const CPU_MEMORY = '0';

/** The hash fields of buffer `i`. */
const field = (i: number, kind: 'b' | 's' | 't' | 'i'): string => `${i}:${kind}`;

function packOutputs(outputs: readonly Tensor[]): Buffer {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  count.writeUInt32LE(outputs.length);
  parts.push(count);
  for (const t of outputs) {
    const name = Buffer.from(t.name, 'utf8');
    const dtype = Buffer.from(t.datatype, 'ascii');
    const head = Buffer.alloc(8 + 4 + name.length + 4 + dtype.length + 4 + 8 * t.shape.length + 8);
    let at = 8;
    at = head.writeUInt32LE(name.length, at);
    at += name.copy(head, at);
    at = head.writeUInt32LE(dtype.length, at);
    at += dtype.copy(head, at);
    at = head.writeUInt32LE(8 * t.shape.length, at);
    for (const d of t.shape) at = head.writeBigInt64LE(BigInt(d), at);
    head.writeBigUInt64LE(BigInt(t.data.byteLength), at);
    head.writeBigUInt64LE(BigInt(head.length - 8 + t.data.byteLength), 0);
    parts.push(head, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  return Buffer.concat(parts);
}

const paramJson = (p: Parameters): string =>
  JSON.stringify(Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v === 'bigint' ? { bigint: v.toString() } : v])));

/** The hash fields for `response` (copies of its bytes), and their total size. */
export function encodeEntry(response: CachedResponse): { fields: Map<string, Buffer | string>; bytes: number } {
  const buffers = [packOutputs(response.outputs)];
  if (response.parameters && Object.keys(response.parameters).length > 0) buffers.push(Buffer.from(paramJson(response.parameters), 'utf8'));
  const fields = new Map<string, Buffer | string>();
  let bytes = 0;
  buffers.forEach((b, i) => {
    fields.set(field(i, 'b'), b);
    fields.set(field(i, 's'), String(b.length));
    fields.set(field(i, 't'), CPU_MEMORY);
    fields.set(field(i, 'i'), '0');
    bytes += b.length + 32;
  });
  return { fields, bytes };
}

/** Reads packed outputs, checking every length against what is there. */
class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number, what: string): void {
    if (n < 0 || this.at + n > this.buf.length) throw new RedisEntryError(`incomplete cache entry: ${what} runs past its buffer`);
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  u64(what: string): number {
    this.need(8, what);
    const v = this.buf.readBigUInt64LE(this.at);
    this.at += 8;
    if (v > BigInt(this.buf.length)) throw new RedisEntryError(`incomplete cache entry: ${what} of ${v} bytes runs past its buffer`);
    return Number(v);
  }
  i64(what: string): number {
    this.need(8, what);
    const v = this.buf.readBigInt64LE(this.at);
    this.at += 8;
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RedisEntryError(`cache entry: ${what} ${v} is not a dimension`);
    return Number(v);
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  get offset(): number {
    return this.at;
  }
  get done(): boolean {
    return this.at === this.buf.length;
  }
}

function unpackOutputs(buf: Buffer): Tensor[] {
  const r = new Reader(buf);
  const count = r.u32('output count');
  const outputs: Tensor[] = [];
  for (let i = 0; i < count; i++) {
    const size = r.u64('packed output size');
    const start = r.offset;
    const name = r.bytes(r.u32('name length'), 'name').toString('utf8');
    const datatype = r.bytes(r.u32('datatype length'), 'datatype').toString('ascii');
    if (!isDataType(datatype)) throw new RedisEntryError(`cache entry: output '${name}' has unknown datatype '${datatype}'`);
    const shapeBytes = r.u32('shape length');
    if (shapeBytes % 8 !== 0) throw new RedisEntryError(`cache entry: output '${name}' shape of ${shapeBytes} bytes is not whole dims`);
    const shape: number[] = [];
    for (let d = 0; d < shapeBytes / 8; d++) shape.push(r.i64('dimension'));
    // A copy: the reply's buffer is not kept past this entry.
    const data = new Uint8Array(r.bytes(r.u64('data length'), 'data'));
    if (r.offset - start !== size) throw new RedisEntryError(`cache entry: output '${name}' packed size ${size} disagrees with its fields`);
    const expected = expectedByteSize(datatype, shape);
    if (expected !== undefined && expected !== data.byteLength) {
      throw new RedisEntryError(`cache entry: output '${name}' holds ${data.byteLength} bytes, its shape [${shape.join(',')}] needs ${expected}`);
    }
    if (datatype === 'BYTES') {
      const elements = shape.reduce((a, b) => a * b, 1);
      if (countBytesElements(data, name) !== elements) throw new RedisEntryError(`cache entry: output '${name}' elements disagree with its shape`);
    }
    outputs.push({ name, datatype, shape, data });
  }
  if (!r.done) throw new RedisEntryError('cache entry: bytes past its last output');
  return outputs;
}

function parseParameters(buf: Buffer): Parameters {
  const raw: unknown = JSON.parse(buf.toString('utf8'));
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new RedisEntryError('cache entry: parameters are not an object');
  const out: Record<string, ParameterValue> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (typeof v === 'object' && v !== null && typeof (v as { bigint?: unknown }).bigint === 'string') out[k] = BigInt((v as { bigint: string }).bigint);
    else throw new RedisEntryError(`cache entry: parameter '${k}' has no parameter type`);
  }
  return out;
}

/**
 * The response held by a hash as HGETALL returns it (field name → bytes), or undefined when the
 * hash is empty (not cached). Throws RedisEntryError when the hash is not a whole entry.
 */
export function decodeEntry(hash: Readonly<Record<string, Buffer>>): CachedResponse | undefined {
  const names = Object.keys(hash);
  if (names.length === 0) return undefined;
  const count = names.length / FIELDS_PER_BUFFER;
  if (!Number.isInteger(count) || count > 2) throw new RedisEntryError('Error: encountered incomplete cache result.');
  const buffers: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const b = hash[field(i, 'b')];
    const s = hash[field(i, 's')];
    if (!b || !s || !hash[field(i, 't')] || !hash[field(i, 'i')]) throw new RedisEntryError('Error: encountered incomplete cache result.');
    if (s.toString() !== String(b.length)) throw new RedisEntryError(`cache entry: buffer ${i} holds ${b.length} bytes, its size field says ${s.toString()}`);
    if (hash[field(i, 't')]!.toString() !== CPU_MEMORY) throw new RedisEntryError(`cache entry: buffer ${i} is not in CPU memory`);
    buffers.push(b);
  }
  const outputs = unpackOutputs(buffers[0]!);
  return buffers[1] ? { outputs, parameters: parseParameters(buffers[1]) } : { outputs };
}
