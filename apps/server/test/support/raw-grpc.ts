/**
 * gRPC calls written by hand over node:http2, for what a grpc-js client will not send: a compressed
 * message that inflates far past its size, a length prefix announcing bytes that never come.
 */
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { encodeInferRequest } from '@tritium/client/proto';

export const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
}

/** The 5-byte gRPC frame header: compressed flag, then the message's length. */
export function frameHeader(length: number, compressed = false): Buffer {
  const h = Buffer.alloc(5);
  h[0] = compressed ? 1 : 0;
  h.writeUInt32BE(length, 1);
  return h;
}

/** A framed, uncompressed ModelInferRequest for `model`'s FP32 INPUT0 of `floats` zeros. */
export function inferFrame(model: string, floats: number): Buffer {
  const message = encodeInferRequest({
    model_name: model,
    model_version: '',
    id: '',
    parameters: {},
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [floats], parameters: {} }],
    outputs: [],
    raw_input_contents: [new Uint8Array(floats * 4)],
  });
  return Buffer.concat([frameHeader(message.length), message]);
}

/**
 * A framed gzip ModelInferRequest whose INPUT0 holds `inflatedBytes` of zeros: about a thousandth of
 * that on the wire. The zeros are compressed as a stream, never held.
 */
export async function gzipBombFrame(model: string, inflatedBytes: number): Promise<Buffer> {
  const head = encodeInferRequest({
    model_name: model,
    model_version: '',
    id: '',
    parameters: {},
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [inflatedBytes / 4], parameters: {} }],
    outputs: [],
    raw_input_contents: [],
  });
  // raw_input_contents (field 7, length-delimited) written by hand, its bytes streamed.
  const gzip = zlib.createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gzip.on('data', (c: Buffer) => parts.push(c));
  const ended = new Promise<void>((resolve, reject) => gzip.once('end', resolve).once('error', reject));
  gzip.write(Buffer.concat([head, Buffer.from([0x3a]), varint(inflatedBytes)]));
  const zeros = Buffer.alloc(1 << 22);
  for (let left = inflatedBytes; left > 0; left -= zeros.length) {
    if (!gzip.write(left >= zeros.length ? zeros : zeros.subarray(0, left))) await new Promise((r) => gzip.once('drain', r));
  }
  gzip.end();
  await ended;
  const compressed = Buffer.concat(parts);
  return Buffer.concat([frameHeader(compressed.length, true), compressed]);
}

export interface RawCall {
  readonly stream: http2.ClientHttp2Stream;
  /** The call's gRPC status and message (from trailers, or headers of a trailers-only answer). */
  readonly status: Promise<{ code: number; message: string }>;
}

/** Opens a call on `session`; write frames to `stream` yourself. */
export function rawCall(session: http2.ClientHttp2Session, path: string, encoding?: 'gzip'): RawCall {
  const stream = session.request({
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...(encoding ? { 'grpc-encoding': encoding } : {}),
  });
  const status = new Promise<{ code: number; message: string }>((resolve, reject) => {
    const settle = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] === undefined) return;
      resolve({ code: Number(h['grpc-status']), message: decodeURIComponent(String(h['grpc-message'] ?? '')) });
    };
    stream.on('response', settle);
    stream.on('trailers', settle);
    stream.on('error', reject);
    stream.on('close', () => reject(new Error(`stream closed without a status (rst ${stream.rstCode})`)));
  });
  status.catch(() => undefined);
  stream.resume();
  return { stream, status };
}
