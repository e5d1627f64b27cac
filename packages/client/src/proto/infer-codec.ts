/**
 * Hand-written codecs for `ModelInferRequest`, `ModelInferResponse` and `ModelStreamInferResponse`
 * (field numbers from Triton's grpc_service.proto). `raw_input_contents` / `raw_output_contents`
 * decode as views into the received buffer; encoding copies each tensor once, into the frame.
 * Used by both the client and the server's gRPC transport.
 */
import { ProtoReader, ProtoWriter, WT_I32, WT_I64, WT_LEN, WT_VARINT } from './wire.ts';

/** An InferParameter value: bool, int64 (number, or bigint past 2^53), string or double. */
export type WireParamValue = boolean | number | bigint | string;
export type WireParams = Record<string, WireParamValue>;

/** InferTensorContents: typed (non-raw) tensor data. */
export interface WireContents {
  bool_contents?: boolean[];
  int_contents?: number[];
  int64_contents?: (number | bigint)[];
  uint_contents?: number[];
  uint64_contents?: (number | bigint)[];
  fp32_contents?: number[];
  fp64_contents?: number[];
  /** BYTES elements to encode, one array entry each. Decoding never fills it: see `bytes_packed`. */
  bytes_contents?: Uint8Array[];
  /**
   * `bytes_contents` in the KServe binary layout (each element a u32 little-endian length, then its
   * bytes) in one buffer: what decoding gives, so a message of millions of short elements costs at
   * most twice its own size and no object per element. Encoding takes it as well.
   */
  bytes_packed?: PackedBytes;
}

/** BYTES elements in the KServe binary layout, and how many there are. */
export interface PackedBytes {
  readonly data: Uint8Array;
  readonly count: number;
}

export interface WireTensor {
  name: string;
  datatype: string;
  shape: number[];
  parameters: WireParams;
  contents?: WireContents;
}

export interface WireRequestedOutput {
  name: string;
  parameters: WireParams;
}

export interface WireInferRequest {
  model_name: string;
  model_version: string;
  id: string;
  parameters: WireParams;
  inputs: WireTensor[];
  outputs: WireRequestedOutput[];
  raw_input_contents: Uint8Array[];
}

export interface WireInferResponse {
  model_name: string;
  model_version: string;
  id: string;
  parameters: WireParams;
  outputs: WireTensor[];
  raw_output_contents: Uint8Array[];
}

export interface WireStreamResponse {
  error_message: string;
  infer_response?: WireInferResponse;
}

// ---- decoding -------------------------------------------------------------------------------

function decodeParam(r: ProtoReader): WireParamValue {
  let value: WireParamValue = false;
  while (!r.done) {
    const [field, wt] = r.tag();
    switch (field) {
      case 1:
        r.expect(wt, WT_VARINT);
        value = r.bool();
        break;
      case 2:
        r.expect(wt, WT_VARINT);
        value = r.varint64(true);
        break;
      case 3:
        r.expect(wt, WT_LEN);
        value = r.string();
        break;
      case 4:
        r.expect(wt, WT_I64);
        value = r.double();
        break;
      case 5:
        r.expect(wt, WT_VARINT);
        value = r.varint64(false);
        break;
      default:
        r.skip(wt);
    }
  }
  return value;
}

/** One `map<string, InferParameter>` entry into `into`. */
function decodeParamEntry(r: ProtoReader, into: WireParams): void {
  let key = '';
  let value: WireParamValue = false;
  while (!r.done) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WT_LEN) key = r.string();
    else if (field === 2 && wt === WT_LEN) value = decodeParam(r.sub());
    else r.skip(wt);
  }
  into[key] = value;
}

function decodeContents(r: ProtoReader): WireContents {
  const c: WireContents = {};
  const start = r.pos;
  let bytesCount = 0;
  let bytesTotal = 0;
  while (!r.done) {
    const [field, wt] = r.tag();
    switch (field) {
      case 1:
        r.repeated(wt, WT_VARINT, (x) => (c.bool_contents ??= []).push(x.bool()));
        break;
      case 2:
        r.repeated(wt, WT_VARINT, (x) => (c.int_contents ??= []).push(x.int32()));
        break;
      case 3:
        r.repeated(wt, WT_VARINT, (x) => (c.int64_contents ??= []).push(x.varint64(true)));
        break;
      case 4:
        r.repeated(wt, WT_VARINT, (x) => (c.uint_contents ??= []).push(x.uint32()));
        break;
      case 5:
        r.repeated(wt, WT_VARINT, (x) => (c.uint64_contents ??= []).push(x.varint64(false)));
        break;
      case 6:
        r.repeated(wt, WT_I32, (x) => (c.fp32_contents ??= []).push(x.float()));
        break;
      case 7:
        r.repeated(wt, WT_I64, (x) => (c.fp64_contents ??= []).push(x.double()));
        break;
      case 8: {
        r.expect(wt, WT_LEN);
        const run = bytesRun(r, undefined, 0);
        bytesTotal += run.total;
        bytesCount += run.count;
        break;
      }
      default:
        r.skip(wt);
    }
  }
  if (bytesCount > 0) c.bytes_packed = packBytesContents(r.buf, start, r.end, bytesCount, bytesTotal);
  return c;
}

/** `bytes_contents`' key (field 8, length-delimited): one byte on the wire. */
const BYTES_KEY = (8 << 3) | WT_LEN;
/**
 * Reads the run of consecutive `bytes_contents` entries at `r.pos` (the first one's key already
 * read) and returns how many there are and their total length; with `out`, also writes each as a u32 LE length and its
 * bytes from `out[at]`. One tight loop with no call or object per entry: a message of 32 MB can hold
 * 16 million of them. An entry whose length takes more than one varint byte goes through the reader.
 */
function bytesRun(r: ProtoReader, out: Buffer | undefined, at: number): { count: number; total: number } {
  const buf = r.buf;
  const end = r.end;
  let pos = r.pos;
  let total = 0;
  let count = 0;
  for (;;) {
    let len = pos < end ? buf[pos]! : 0x80;
    if (len < 0x80 && len < end - pos) {
      pos += 1 + len;
    } else {
      r.pos = pos;
      len = r.skipBytes();
      pos = r.pos;
    }
    if (out) {
      // `out` starts zeroed: an empty element's prefix is already there.
      if (len !== 0) {
        out[at] = len & 0xff;
        out[at + 1] = (len >>> 8) & 0xff;
        out[at + 2] = (len >>> 16) & 0xff;
        out[at + 3] = len >>> 24;
      }
      at += 4;
      // A native copy costs more than a short loop; most elements are short.
      if (len > 64) {
        buf.copy(out, at, pos - len, pos);
        at += len;
      } else {
        for (let i = pos - len; i < pos; i++) out[at++] = buf[i]!;
      }
    }
    total += len;
    count++;
    if (pos >= end || buf[pos] !== BYTES_KEY) break;
    pos++;
  }
  r.pos = pos;
  return { count, total };
}

/** Copies the `bytes_contents` entries of the contents message at `[start, end)` into one packed buffer (a second pass). */
function packBytesContents(buf: Buffer, start: number, end: number, count: number, total: number): PackedBytes {
  const packed = new Uint8Array(4 * count + total);
  const data = Buffer.from(packed.buffer);
  const r = new ProtoReader(buf, start, end);
  let at = 0;
  while (!r.done) {
    const [field, wt] = r.tag();
    if (field !== 8) {
      r.skip(wt);
      continue;
    }
    const run = bytesRun(r, data, at);
    at += 4 * run.count + run.total;
  }
  return { data: packed, count };
}

function toShapeNumber(v: number | bigint): number {
  return typeof v === 'bigint' ? Number(v) : v;
}

/** InferInputTensor and InferOutputTensor share field numbers 1..5. */
function decodeTensor(r: ProtoReader): WireTensor {
  const t: WireTensor = { name: '', datatype: '', shape: [], parameters: {} };
  while (!r.done) {
    const [field, wt] = r.tag();
    switch (field) {
      case 1:
        r.expect(wt, WT_LEN);
        t.name = r.string();
        break;
      case 2:
        r.expect(wt, WT_LEN);
        t.datatype = r.string();
        break;
      case 3:
        r.repeated(wt, WT_VARINT, (x) => t.shape.push(toShapeNumber(x.varint64(true))));
        break;
      case 4:
        r.expect(wt, WT_LEN);
        decodeParamEntry(r.sub(), t.parameters);
        break;
      case 5:
        r.expect(wt, WT_LEN);
        t.contents = decodeContents(r.sub());
        break;
      default:
        r.skip(wt);
    }
  }
  return t;
}

function decodeRequestedOutput(r: ProtoReader): WireRequestedOutput {
  const o: WireRequestedOutput = { name: '', parameters: {} };
  while (!r.done) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WT_LEN) o.name = r.string();
    else if (field === 2 && wt === WT_LEN) decodeParamEntry(r.sub(), o.parameters);
    else r.skip(wt);
  }
  return o;
}

/** The fields ModelInferRequest and ModelInferResponse share: 1–4, with the same numbers and types. */
type CommonFields = Pick<WireInferRequest, 'model_name' | 'model_version' | 'id' | 'parameters'>;

/**
 * Reads a ModelInferRequest or ModelInferResponse into `m`; unknown fields are skipped. Both have
 * fields 1–4 and tensors at 5; a request (given `requested`) has the outputs asked for at 6 and raw
 * contents at 7, a response raw contents at 6. Plain branches, no per-field callbacks: this runs for
 * every gRPC inference.
 */
function decodeInferMessage(
  r: ProtoReader,
  m: CommonFields,
  tensors: WireTensor[],
  raw: Uint8Array[],
  requested?: WireRequestedOutput[],
): void {
  const rawField = requested ? 7 : 6;
  while (!r.done) {
    const [field, wt] = r.tag();
    if (field >= 1 && field <= 4) {
      r.expect(wt, WT_LEN);
      if (field === 1) m.model_name = r.string();
      else if (field === 2) m.model_version = r.string();
      else if (field === 3) m.id = r.string();
      else decodeParamEntry(r.sub(), m.parameters);
    } else if (field === 5) {
      r.expect(wt, WT_LEN);
      tensors.push(decodeTensor(r.sub()));
    } else if (field === rawField) {
      r.expect(wt, WT_LEN);
      raw.push(r.bytes());
    } else if (field === 6 && requested) {
      r.expect(wt, WT_LEN);
      requested.push(decodeRequestedOutput(r.sub()));
    } else r.skip(wt);
  }
}

/** Decodes a ModelInferRequest. Throws WireFormatError on malformed input. */
export function decodeInferRequest(buf: Buffer): WireInferRequest {
  const m: WireInferRequest = { model_name: '', model_version: '', id: '', parameters: {}, inputs: [], outputs: [], raw_input_contents: [] };
  decodeInferMessage(new ProtoReader(buf), m, m.inputs, m.raw_input_contents, m.outputs);
  return m;
}

function decodeInferResponseFrom(r: ProtoReader): WireInferResponse {
  const m: WireInferResponse = { model_name: '', model_version: '', id: '', parameters: {}, outputs: [], raw_output_contents: [] };
  decodeInferMessage(r, m, m.outputs, m.raw_output_contents);
  return m;
}

export function decodeInferResponse(buf: Buffer): WireInferResponse {
  return decodeInferResponseFrom(new ProtoReader(buf));
}

export function decodeStreamResponse(buf: Buffer): WireStreamResponse {
  const r = new ProtoReader(buf);
  const m: WireStreamResponse = { error_message: '' };
  while (!r.done) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WT_LEN) m.error_message = r.string();
    else if (field === 2 && wt === WT_LEN) m.infer_response = decodeInferResponseFrom(r.sub());
    else r.skip(wt);
  }
  return m;
}

// ---- encoding -------------------------------------------------------------------------------

function writeParam(w: ProtoWriter, v: WireParamValue): void {
  if (typeof v === 'boolean') {
    // A oneof member is written even when false, so the receiver sees which member is set.
    w.tag(1, WT_VARINT);
    w.uint32(v ? 1 : 0);
  } else if (typeof v === 'string') {
    w.string(3, v, true);
  } else if (typeof v === 'bigint') {
    w.tag(v > 0x7fffffffffffffffn ? 5 : 2, WT_VARINT);
    w.varint64(v);
  } else if (Number.isInteger(v)) {
    w.tag(2, WT_VARINT);
    w.varint64(v);
  } else {
    w.double(4, v);
  }
}

function writeParams(w: ProtoWriter, field: number, params: WireParams | undefined): void {
  if (!params) return;
  for (const key of Object.keys(params)) {
    w.message(field, (e) => {
      e.string(1, key);
      e.message(2, (p) => writeParam(p, params[key]!));
    });
  }
}

function writeContents(w: ProtoWriter, c: WireContents): void {
  const packed = <T>(field: number, values: readonly T[] | undefined, put: (x: ProtoWriter, v: T) => void) => {
    if (!values || values.length === 0) return;
    const inner = new ProtoWriter(values.length * 4 + 8);
    for (const v of values) put(inner, v);
    w.bytes(field, inner.finish());
  };
  packed(1, c.bool_contents, (x, v: boolean) => x.uint32(v ? 1 : 0));
  packed(2, c.int_contents, (x, v: number) => x.varint64(v));
  packed(3, c.int64_contents, (x, v: number | bigint) => x.varint64(v));
  packed(4, c.uint_contents, (x, v: number) => x.uint32(v));
  packed(5, c.uint64_contents, (x, v: number | bigint) => x.varint64(v));
  packed(6, c.fp32_contents, (x, v: number) => {
    const b = Buffer.allocUnsafe(4);
    b.writeFloatLE(v, 0);
    x.raw(b);
  });
  packed(7, c.fp64_contents, (x, v: number) => {
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleLE(v, 0);
    x.raw(b);
  });
  for (const b of c.bytes_contents ?? []) w.bytes(8, b, true);
  const elements = c.bytes_packed?.data;
  for (let at = 0; elements && at + 4 <= elements.byteLength; ) {
    const len = (elements[at]! | (elements[at + 1]! << 8) | (elements[at + 2]! << 16)) + elements[at + 3]! * 0x1000000;
    w.bytes(8, elements.subarray(at + 4, at + 4 + len), true);
    at += 4 + len;
  }
}

function writeTensor(w: ProtoWriter, field: number, t: WireTensor): void {
  w.message(field, (x) => {
    x.string(1, t.name);
    x.string(2, t.datatype);
    x.packedInt64(3, t.shape);
    writeParams(x, 4, t.parameters);
    if (t.contents) x.message(5, (c) => writeContents(c, t.contents!));
  });
}

function rawTotal(raws: readonly Uint8Array[]): number {
  let n = 0;
  for (const r of raws) n += r.byteLength + 11;
  return n;
}

/** Encodes a ModelInferRequest; raw contents are copied once into the result. */
export function encodeInferRequest(m: WireInferRequest): Buffer {
  const w = new ProtoWriter(256 + rawTotal(m.raw_input_contents));
  writeCommonFields(w, m);
  for (const t of m.inputs) writeTensor(w, 5, t);
  for (const o of m.outputs) {
    w.message(6, (x) => {
      x.string(1, o.name);
      writeParams(x, 2, o.parameters);
    });
  }
  for (const raw of m.raw_input_contents) w.bytes(7, raw, true);
  return w.finish();
}

/** Fields 1–4, the same in ModelInferRequest and ModelInferResponse. */
function writeCommonFields(w: ProtoWriter, m: CommonFields): void {
  w.string(1, m.model_name);
  w.string(2, m.model_version);
  w.string(3, m.id);
  writeParams(w, 4, m.parameters);
}

function writeInferResponse(w: ProtoWriter, m: WireInferResponse): void {
  writeCommonFields(w, m);
  for (const t of m.outputs) writeTensor(w, 5, t);
  for (const raw of m.raw_output_contents) w.bytes(6, raw, true);
}

/** Encodes a ModelInferResponse; raw contents are copied once into the result. */
export function encodeInferResponse(m: WireInferResponse): Buffer {
  const w = new ProtoWriter(256 + rawTotal(m.raw_output_contents));
  writeInferResponse(w, m);
  return w.finish();
}

export function encodeStreamResponse(m: WireStreamResponse): Buffer {
  const inner = m.infer_response ? encodeInferResponse(m.infer_response) : undefined;
  const w = new ProtoWriter(64 + (inner?.length ?? 0));
  w.string(1, m.error_message);
  if (inner) w.bytes(2, inner, true);
  return w.finish();
}
