/**
 * Decoding `ModelInferRequest`, `ModelInferResponse` and `ModelStreamInferResponse` (the messages of
 * infer-codec.ts): `raw_input_contents` / `raw_output_contents` decode as views into the received
 * buffer, and `bytes_contents` into one packed buffer. Runs for every gRPC inference.
 */
import { ProtoReader, WT_I32, WT_I64, WT_LEN, WT_VARINT } from './wire.ts';
import type {
  CommonFields,
  PackedBytes,
  WireContents,
  WireInferRequest,
  WireInferResponse,
  WireParams,
  WireParamValue,
  WireRequestedOutput,
  WireStreamResponse,
  WireTensor,
} from './infer-codec.ts';

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
