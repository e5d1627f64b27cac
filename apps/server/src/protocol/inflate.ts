/**
 * Budgeted decompression, for HTTP bodies (`Content-Encoding`) and gRPC messages (`grpc-encoding`)
 * alike: zlib inflates on its thread pool in chunks of 16 KiB, each chunk is charged to the
 * request's account as it comes out, and the output stops one chunk past the request's own bound.
 * So a bomb (1 MB inflating to 1 GiB) costs at most its bound, and never more than the server-wide
 * budget has left.
 */
import zlib from 'node:zlib';
import type { RequestAccount } from './request-budget.ts';

export type Compression = 'gzip' | 'deflate';

export interface InflateBound {
  /** The most bytes the output may have. */
  readonly maxBytes: number;
  /** The error once the output passes `maxBytes` (names the flag that sets it). */
  tooLarge(): Error;
  /** The error for input that does not decompress (zlib's message given). */
  corrupt(reason: string): Error;
}

/** Decompresses `input`, charging each output chunk to `account` (whose refusal is thrown as is). */
export function inflateWithin(input: Uint8Array, encoding: Compression, bound: InflateBound, account: RequestAccount): Promise<Buffer> {
  const z = encoding === 'gzip' ? zlib.createGunzip() : zlib.createInflate();
  const chunks: Buffer[] = [];
  let total = 0;
  return new Promise<Buffer>((resolve, reject) => {
    let settled = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      z.destroy();
      // What was charged for the partial output is given back with it.
      account.give(total);
      reject(e);
    };
    z.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (total + chunk.length > bound.maxBytes) return fail(bound.tooLarge());
      try {
        account.take(chunk.length);
      } catch (e) {
        return fail(e);
      }
      chunks.push(chunk);
      total += chunk.length;
    });
    z.once('end', () => {
      if (settled) return;
      settled = true;
      // Joining the chunks holds the output twice for the time of one copy; not charged.
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    });
    z.once('error', (err) => fail(bound.corrupt(err.message)));
    z.end(input);
  });
}
