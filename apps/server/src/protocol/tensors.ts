/**
 * Tensor conversions the transports share: shape checks against the element limit, gRPC typed
 * `contents` and HTTP JSON `data` to wire bytes, and output bytes back to JSON values.
 */
import { randomBytes } from 'node:crypto';
import { isDataType, typedView, type DataType, type Tensor } from '@tritium/core';
import { DATA_TYPE_SIZE, TYPED_ARRAY_CONSTRUCTORS, encodeBytesElements, readU32LE } from '@tritium/core/tensor';
import type { WireContents } from '@tritium/client/proto';
import { invalidArg, TransportError } from './status.ts';
import type { TransportLimits } from './limits.ts';

/** Checks a datatype string from the wire. */
export function checkDataType(datatype: string, tensorName: string): DataType {
  if (!isDataType(datatype)) {
    throw invalidArg(`invalid datatype '${datatype}' for input '${tensorName}'`);
  }
  return datatype;
}

/** Validates a request shape (non-negative integers, element count within the limit); returns the count. */
export function checkShape(shape: readonly unknown[], tensorName: string, limits: TransportLimits): number {
  let count = 1;
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw invalidArg(`invalid shape for input '${tensorName}': dimension ${String(d)} must be a non-negative integer`);
    }
    // Past 2^53-1 a dimension is no longer exact as a number: with a 0 elsewhere the element count
    // passes, and the shape reached the instance, whose reply then failed the worker-boundary check
    // and restarted the instance (a crash any client could cause at will).
    if (!Number.isSafeInteger(d)) {
      throw invalidArg(`invalid shape for input '${tensorName}': dimension ${String(d)} is larger than ${Number.MAX_SAFE_INTEGER}, the largest this server accepts`);
    }
    count *= d;
  }
  if (count > limits.maxTensorElements) {
    throw new TransportError(
      `input '${tensorName}' has ${count} elements, more than the server's limit of ${limits.maxTensorElements}`,
      400,
    );
  }
  return count;
}

function fixedBuffer(datatype: DataType, count: number): ArrayBuffer {
  return new ArrayBuffer(DATA_TYPE_SIZE[datatype] * count);
}

/**
 * The values each integer datatype holds. A typed array stores anything else wrapped (INT32 2^40
 * became 0, 1e300 became 0, UINT8 -1 became 255), so the model computed on a number the client never
 * sent; out of range is refused instead. Triton's JSON reader refuses non-integers and negative
 * unsigned values, and marks the narrowing casts of its smaller types as needing this bounds check.
 */
const INT_RANGE: Partial<Record<DataType, readonly [bigint, bigint]>> = {
  INT8: [-(2n ** 7n), 2n ** 7n - 1n],
  INT16: [-(2n ** 15n), 2n ** 15n - 1n],
  INT32: [-(2n ** 31n), 2n ** 31n - 1n],
  INT64: [-(2n ** 63n), 2n ** 63n - 1n],
  UINT8: [0n, 2n ** 8n - 1n],
  UINT16: [0n, 2n ** 16n - 1n],
  UINT32: [0n, 2n ** 32n - 1n],
  UINT64: [0n, 2n ** 64n - 1n],
};

/** Fills a typed array of `datatype` from JS values (numbers, bigints or booleans), checking each. */
function fillTyped(datatype: DataType, values: readonly unknown[], tensorName: string): Uint8Array {
  const n = values.length;
  const buf = fixedBuffer(datatype, n);
  const bad = (v: unknown): never => {
    throw invalidArg(`unable to convert ${JSON.stringify(v) ?? String(v)} to ${datatype} for input '${tensorName}'`);
  };
  const range = INT_RANGE[datatype];
  const outOfRange = (v: unknown): never => {
    throw invalidArg(
      `unable to convert ${typeof v === 'bigint' ? String(v) : (JSON.stringify(v) ?? String(v))} to ${datatype} for input '${tensorName}': out of range [${range![0]}, ${range![1]}]`,
    );
  };
  const [lo, hi] = range ? [Number(range[0]), Number(range[1])] : [0, 0];
  const int = (v: unknown): number => {
    const x = typeof v === 'bigint' ? Number(v) : v;
    if (typeof x !== 'number' || !Number.isInteger(x)) bad(v);
    if ((x as number) < lo || (x as number) > hi) outOfRange(v);
    return x as number;
  };
  const big = (v: unknown): bigint => {
    let x: bigint;
    if (typeof v === 'bigint') x = v;
    else if (typeof v === 'number' && Number.isInteger(v)) x = BigInt(v);
    else if (typeof v === 'string' && /^-?\d+$/.test(v)) x = BigInt(v);
    else return bad(v);
    if (x < range![0] || x > range![1]) outOfRange(v);
    return x;
  };
  const num = (v: unknown): number => (typeof v === 'number' ? v : bad(v));
  if (datatype === 'FP16' || datatype === 'BF16' || datatype === 'BYTES') {
    throw invalidArg(`conversion of ${datatype} data for input '${tensorName}' from a non-binary form is not supported; send it as binary/raw data`);
  }
  // Core's datatype → typed array table; one loop per kind of element conversion.
  const a = new TYPED_ARRAY_CONSTRUCTORS[datatype](buf, 0, n);
  if (datatype === 'BOOL') {
    for (let i = 0; i < n; i++) {
      const v = values[i];
      a[i] = typeof v === 'boolean' ? (v ? 1 : 0) : bad(v);
    }
  } else if (datatype === 'INT64' || datatype === 'UINT64') {
    const wide = a as BigInt64Array | BigUint64Array;
    for (let i = 0; i < n; i++) wide[i] = big(values[i]);
  } else if (datatype === 'FP32' || datatype === 'FP64') {
    for (let i = 0; i < n; i++) a[i] = num(values[i]);
  } else {
    for (let i = 0; i < n; i++) a[i] = int(values[i]);
  }
  return new Uint8Array(buf);
}

/** gRPC `InferTensorContents` → wire bytes; the field used must match the datatype. */
export function contentsToBytes(datatype: DataType, contents: WireContents, count: number, tensorName: string, model: string): Uint8Array {
  const field: Partial<Record<DataType, keyof WireContents>> = {
    BOOL: 'bool_contents',
    INT8: 'int_contents',
    INT16: 'int_contents',
    INT32: 'int_contents',
    INT64: 'int64_contents',
    UINT8: 'uint_contents',
    UINT16: 'uint_contents',
    UINT32: 'uint_contents',
    UINT64: 'uint64_contents',
    FP32: 'fp32_contents',
    FP64: 'fp64_contents',
    BYTES: 'bytes_contents',
  };
  const key = field[datatype];
  if (!key) throw invalidArg(`${datatype} data cannot be sent in 'contents' for input '${tensorName}' for model '${model}'; use raw_input_contents`);
  // BYTES arrive packed by the codec (one buffer, no object per element): used as they are.
  const packed = datatype === 'BYTES' ? contents.bytes_packed : undefined;
  const values = packed ? undefined : ((contents[key] ?? []) as unknown[]);
  const given = packed ? packed.count : values!.length;
  if (given !== count) {
    throw invalidArg(`unexpected number of elements in 'contents' for input '${tensorName}' for model '${model}'. Expected ${count}, got ${given}`);
  }
  if (packed) return packed.data;
  if (datatype === 'BYTES') return encodeBytesElements(values as Uint8Array[]);
  return fillTyped(datatype, values!, tensorName);
}

/** Flattens nested JSON `data` row-major, stopping (with an error) past `limit` elements. */
function flatten(data: unknown, limit: number, tensorName: string): unknown[] {
  const out: unknown[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) throw invalidArg(`'data' for input '${tensorName}' is nested too deeply`);
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
    } else {
      if (out.length >= limit) throw invalidArg("Unable to parse 'data': Shape does not match true shape of 'data' field");
      out.push(v);
    }
  };
  walk(data, 0);
  return out;
}

/**
 * Whether JSON `data` (nested or flat) of `datatype` must be read again from the body's text: a
 * 64-bit integer tensor holding an integer JSON.parse may have rounded (past 2^53-1). Stops at the
 * nesting `flatten` refuses.
 */
export function needsExactIntegers(datatype: DataType, data: unknown): boolean {
  return (datatype === 'INT64' || datatype === 'UINT64') && holdsRoundedInteger(data, 0);
}

function holdsRoundedInteger(data: unknown, depth: number): boolean {
  if (Array.isArray(data)) return depth <= 64 && data.some((x) => holdsRoundedInteger(x, depth + 1));
  return typeof data === 'number' && Number.isInteger(data) && !Number.isSafeInteger(data);
}

/** HTTP JSON `data` (nested or flat) → wire bytes. */
export function jsonDataToBytes(datatype: DataType, data: unknown, count: number, tensorName: string): Uint8Array {
  const values = flatten(data, count, tensorName);
  if (values.length !== count) {
    throw invalidArg("Unable to parse 'data': Shape does not match true shape of 'data' field");
  }
  if (datatype === 'BYTES') {
    for (const v of values) {
      if (typeof v !== 'string') throw invalidArg(`unable to convert ${JSON.stringify(v)} to BYTES for input '${tensorName}'; expected a string`);
    }
    return encodeBytesElements(values as string[]);
  }
  return fillTyped(datatype, values, tensorName);
}

const lenientUtf8 = new TextDecoder('utf-8');

/** Prefix of a 64-bit integer carried as a string until exactJson() prints it as a number. */
const BIG_MARK = '\u0000int:';
const BIG_MARKED = /"\\u0000int:(-?\d+)"/g;

/**
 * Marks where exactJson() splices a JsonText. The random part keeps a client's own string (an id, a
 * parameter) from passing for a mark: it never appears in a response.
 */
const SPLICE_MARK = `\u0000json:${randomBytes(8).toString('hex')}:`;
const SPLICE_MARKED = new RegExp(`"\\\\u0000json:${SPLICE_MARK.slice(6, -1)}:(\\d+)"`, 'g');
/** The bytes of the JsonTexts met by the exactJson() running now. */
let splices: Buffer[] | undefined;

/**
 * JSON text (UTF-8 bytes) standing for a value in exactJson()'s output, so a large array can be
 * written straight from tensor bytes instead of through an object per element.
 */
export class JsonText {
  constructor(readonly bytes: Buffer) {}

  toJSON(): string {
    if (!splices) throw new Error('JsonText is printed by exactJson() only');
    splices.push(this.bytes);
    return `${SPLICE_MARK}${splices.length - 1}`;
  }
}

/** JSON.stringify with 64-bit integers printed exactly; the JsonTexts met, in the order of their marks. */
function stringify(value: unknown): { text: string; texts: Buffer[] } {
  const outer = splices;
  const texts: Buffer[] = [];
  splices = texts;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    splices = outer;
  }
  if (text.includes('\\u0000int:')) text = text.replace(BIG_MARKED, '$1');
  return { text, texts };
}

/**
 * The JSON of `value` as UTF-8 parts, to write one after another: 64-bit integers from
 * tensorToJsonData printed exactly (as Triton does), and each JsonText a part of its own, its bytes as
 * they are (never copied into a JS string).
 */
export function exactJsonParts(value: unknown): Buffer[] {
  const { text, texts } = stringify(value);
  if (texts.length === 0) return [Buffer.from(text)];
  const parts: Buffer[] = [];
  let from = 0;
  for (const m of text.matchAll(SPLICE_MARKED)) {
    parts.push(Buffer.from(text.slice(from, m.index)), texts[Number(m[1])]!);
    from = m.index + m[0].length;
  }
  parts.push(Buffer.from(text.slice(from)));
  return parts;
}

/** exactJsonParts() as one string. */
export function exactJson(value: unknown): string {
  const { text, texts } = stringify(value);
  return texts.length === 0 ? text : text.replace(SPLICE_MARKED, (_, i: string) => texts[Number(i)]!.toString('utf8'));
}

/**
 * BYTES data as a JSON array of strings (invalid UTF-8 replaced, as TextDecoder does), written from
 * its bytes: an element of printable ASCII is copied as it is, any other is decoded and escaped on
 * its own. No object outlives its element, whatever the element count.
 */
export function bytesJsonText(data: Uint8Array, name: string): Buffer {
  let out = Buffer.allocUnsafe(Math.max(64, data.byteLength + 16));
  let used = 0;
  const put = (n: number): void => {
    if (used + n <= out.length) return;
    const next = Buffer.allocUnsafe(Math.max(used + n, out.length * 2));
    out.copy(next, 0, 0, used);
    out = next;
  };
  put(1);
  out[used++] = 0x5b; // [
  const size = data.byteLength;
  for (let at = 0, first = true; at < size; first = false) {
    if (at + 4 > size) throw invalidArg(`malformed BYTES data for '${name}': truncated length prefix at byte ${at}`);
    const len = readU32LE(data, at);
    const start = at + 4;
    const end = start + len;
    if (end > size) throw invalidArg(`malformed BYTES data for '${name}': element of ${len} bytes at byte ${at} runs past the end (${size})`);
    at = end;
    let plain = true;
    for (let i = start; i < end && plain; i++) {
      const b = data[i]!;
      plain = b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c;
    }
    if (plain) {
      put(len + 3);
      if (!first) out[used++] = 0x2c; // ,
      out[used++] = 0x22;
      out.set(data.subarray(start, end), used);
      used += len;
      out[used++] = 0x22;
    } else {
      const text = JSON.stringify(lenientUtf8.decode(data.subarray(start, end)));
      put(text.length * 3 + 1);
      if (!first) out[used++] = 0x2c;
      used += out.write(text, used, 'utf8');
    }
  }
  put(1);
  out[used++] = 0x5d; // ]
  return out.subarray(0, used);
}

/**
 * Output tensor → JSON `data`: flat values, or for BYTES the JSON text of its strings (bytesJsonText).
 * FP16/BF16 cannot travel as JSON.
 */
export function tensorToJsonData(t: Tensor): unknown[] | JsonText {
  switch (t.datatype) {
    case 'BYTES':
      return new JsonText(bytesJsonText(t.data, t.name));
    case 'BOOL':
      return Array.from(t.data, (b) => b !== 0);
    case 'FP16':
    case 'BF16':
      throw invalidArg(`receiving ${t.datatype} data via JSON is not supported. Please use the binary data format for output '${t.name}'`);
    case 'INT64':
    case 'UINT64':
      // Exact beyond 2^53: a marked string that exactJson() turns back into a bare number.
      return Array.from(typedView(t) as BigInt64Array, (v) => (Number.isSafeInteger(Number(v)) ? Number(v) : `${BIG_MARK}${v}`));
    default:
      return Array.from(typedView(t) as Float32Array);
  }
}

/** A one-element output tensor's value as generate prints it (a bare scalar or string). */
export function tensorToJsonScalar(t: Tensor): unknown {
  if (t.datatype !== 'BYTES') return (tensorToJsonData(t) as unknown[])[0];
  return lenientUtf8.decode(t.data.subarray(4, 4 + readU32LE(t.data, 0)));
}
