/**
 * Reads a request body under its size limit (`--http-max-input-size`, or `--http-max-json-size` for
 * a body that is all JSON), then undoes `Content-Encoding: gzip|deflate` with the same limit on the
 * decompressed size. Never buffers more than the limit, and every byte it holds is taken from the
 * request's share of the server-wide budget (request-budget.ts) first.
 */
import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { InferError } from '@tritium/core';
import { TransportError } from '../protocol/status.ts';
import type { RequestAccount } from '../protocol/request-budget.ts';
import { inflateWithin } from '../protocol/inflate.ts';

/** Which limit a body is read under: the input size, or the lower JSON size for a JSON body. */
export interface BodyLimit {
  readonly bytes: number;
  readonly json: boolean;
  /** The refusal past the limit, when a route words it its own way (`what` says which body). */
  readonly tooLarge?: (what: string) => TransportError;
}

function tooLarge(limit: BodyLimit, what: string): TransportError {
  if (limit.tooLarge) return limit.tooLarge(what);
  return limit.json
    ? new TransportError(`JSON ${what} exceeds the server's maximum JSON size of ${limit.bytes} bytes (--http-max-json-size); send tensors in binary form`, 413)
    : new TransportError(`${what} exceeds the server's maximum input size of ${limit.bytes} bytes (--http-max-input-size)`, 413);
}

export async function readBody(req: IncomingMessage, bodyLimit: BodyLimit, account: RequestAccount): Promise<Buffer> {
  const limit = bodyLimit.bytes;
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw tooLarge(bodyLimit, `request body of ${declared} bytes`);
  }
  // A declared length is taken whole before anything is read (the buffer below is allocated for it,
  // whether or not the client ever sends it); a chunked body is taken chunk by chunk.
  const reserved = Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
  if (reserved > 0) {
    try {
      account.take(reserved);
    } catch (e) {
      req.resume();
      throw e;
    }
  }
  const body = await new Promise<Buffer>((resolve, reject) => {
    // With a declared length of any size, each chunk is copied into place as it arrives, so no single
    // step copies the whole body (concatenating 16 MB at the end held the event loop for a while).
    // The buffer is the body's own ArrayBuffer, so it can be transferred to a worker.
    const whole = Number.isSafeInteger(declared) && declared > 64 * 1024 ? Buffer.allocUnsafeSlow(declared) : undefined;
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      if (total + chunk.length > limit || (whole && total + chunk.length > whole.length)) {
        req.off('data', onData);
        req.resume();
        reject(tooLarge(bodyLimit, 'request body'));
        return;
      }
      if (total + chunk.length > reserved) {
        try {
          account.take(total + chunk.length - Math.max(total, reserved));
        } catch (e) {
          req.off('data', onData);
          req.resume();
          reject(e);
          return;
        }
      }
      if (whole) chunk.copy(whole, total);
      else chunks.push(chunk);
      total += chunk.length;
    };
    req.on('data', onData);
    req.once('end', () => {
      if (whole) resolve(total === whole.length ? whole : whole.subarray(0, total));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    });
    req.once('error', reject);
  });
  const encoding = String(req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (!encoding || encoding === 'identity') return body;
  if (encoding !== 'gzip' && encoding !== 'deflate') throw new InferError('UNSUPPORTED', `unsupported Content-Encoding '${encoding}'; expected gzip or deflate`);
  const out = await inflateWithin(
    body,
    encoding,
    {
      maxBytes: bodyLimit.bytes,
      tooLarge: () => tooLarge(bodyLimit, 'decompressed request body'),
      corrupt: (reason) => new InferError('INVALID_ARG', `failed to decompress the request body (${encoding}): ${reason}`),
    },
    account,
  );
  // The compressed body is dropped now.
  account.give(Math.max(reserved, body.length));
  return out;
}

/**
 * The response encoding an `Accept-Encoding` header selects, as Triton's CompressionTypeUsed does:
 * among `identity`, `gzip` and `deflate`, the one with the highest `q` weight (default 1) wins, the
 * first listed on a tie; anything else, a malformed weight or `q=0` is never chosen.
 * Undefined means identity (no compression).
 */
export function pickEncoding(accept: string | undefined): 'gzip' | 'deflate' | undefined {
  if (!accept) return undefined;
  let chosen = 'identity';
  let best = 0;
  for (const part of accept.split(',')) {
    const [rawType, ...params] = part.split(';');
    const type = rawType!.trim().toLowerCase();
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((x) => x.trim());
      if (k?.toLowerCase() !== 'q') continue;
      weight = v !== undefined && /^\d+(\.\d*)?$|^\.\d+$/.test(v) ? Number(v) : 0;
    }
    if ((type === 'identity' || type === 'gzip' || type === 'deflate') && weight > best) {
      chosen = type;
      best = weight;
    }
  }
  return chosen === 'identity' ? undefined : (chosen as 'gzip' | 'deflate');
}

export function compress(body: Buffer, encoding: 'gzip' | 'deflate'): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    (encoding === 'gzip' ? zlib.gzip : zlib.deflate)(body, (err, out) => (err ? reject(err) : resolve(out))),
  );
}
