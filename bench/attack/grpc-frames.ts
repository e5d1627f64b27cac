/**
 * gRPC calls written by hand over node:http2, for what a grpc-js client will not send (a compressed
 * message inflating far past its size, connections that never call).
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

/**
 * A framed gzip ModelInferRequest for `model` whose FP32 INPUT0 holds `inflatedBytes` of zeros:
 * about a thousandth of that on the wire, compressed as a stream (never held whole here).
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
  const gzip = zlib.createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gzip.on('data', (c: Buffer) => parts.push(c));
  const ended = new Promise<void>((resolve, reject) => gzip.once('end', resolve).once('error', reject));
  // raw_input_contents (field 7, length-delimited) by hand, its bytes streamed.
  gzip.write(Buffer.concat([head, Buffer.from([0x3a]), varint(inflatedBytes)]));
  const zeros = Buffer.alloc(1 << 22);
  for (let left = inflatedBytes; left > 0; left -= zeros.length) {
    if (!gzip.write(left >= zeros.length ? zeros : zeros.subarray(0, left))) await new Promise((r) => gzip.once('drain', r));
  }
  gzip.end();
  await ended;
  const compressed = Buffer.concat(parts);
  const header = Buffer.alloc(5);
  header[0] = 1;
  header.writeUInt32BE(compressed.length, 1);
  return Buffer.concat([header, compressed]);
}

/** Sends one framed message on a new call; resolves with its gRPC status and message. */
export function unaryCall(session: http2.ClientHttp2Session, path: string, frame: Buffer, encoding?: 'gzip'): Promise<{ code: number; message: string }> {
  return new Promise((resolve) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...(encoding ? { 'grpc-encoding': encoding } : {}),
    });
    const settle = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) resolve({ code: Number(h['grpc-status']), message: decodeURIComponent(String(h['grpc-message'] ?? '')) });
    };
    stream.on('response', settle);
    stream.on('trailers', settle);
    stream.on('error', (e) => resolve({ code: -1, message: e.message }));
    stream.on('close', () => resolve({ code: -1, message: `closed without a status (rst ${stream.rstCode})` }));
    stream.resume();
    stream.end(frame);
  });
}
