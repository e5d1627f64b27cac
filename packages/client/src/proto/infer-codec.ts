/**
 * Hand-written codecs for `ModelInferRequest`, `ModelInferResponse` and `ModelStreamInferResponse`
 * (field numbers from Triton's grpc_service.proto): their types and their encoding here, their
 * decoding in infer-decode.ts. `raw_input_contents` / `raw_output_contents` decode as views into the
 * received buffer; encoding copies each tensor once, into the frame. Used by both the client and the
 * server's gRPC transport.
 */
import { ProtoWriter, WT_VARINT } from './wire.ts';

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

/** The fields ModelInferRequest and ModelInferResponse share: 1–4, with the same numbers and types. */
export type CommonFields = Pick<WireInferRequest, 'model_name' | 'model_version' | 'id' | 'parameters'>;

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
