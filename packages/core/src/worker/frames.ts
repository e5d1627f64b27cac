/**
 * The framing of a child process's channel (process isolation): each message is a 4-byte big-endian
 * length and the message's V8 serialization (what Node's `serialization: 'advanced'` IPC sends).
 *
 * Why not Node's IPC: the child inherits its end of the channel as a plain fd, so a sandboxed
 * model.ts can write any bytes to it (`fs.writeSync(3, ...)`), and Node's IPC parser, running in the
 * server, throws out of its socket callback on a body that does not deserialize (an uncaught
 * exception: the whole server ends) and buffers whatever length a header announces (up to 2 GiB,
 * then copies it once more). Here the host reads the child's bytes itself: a frame longer than the
 * bound (the child's whole-process memory, which no honest message can exceed) is refused at its
 * header, before any of it is held, and a body that does not deserialize is reported, never thrown.
 */
import { DefaultSerializer, deserialize } from 'node:v8';

const HEADER = 4;

/** The fd of a child process's channel to its host (its stdio slot 3). */
export const CHILD_CHANNEL_FD = 3;

/** Node's IPC could carry 2^31 - 1 bytes at most; the bound when nothing smaller is known. */
export const MAX_FRAME_BYTES = 2 ** 31 - 1;

const PLACEHOLDER = new Uint8Array(HEADER);

/** `v8.serialize(message)` behind its length, serialized in place (no copy of the body). */
export function encodeFrame(message: unknown): Buffer {
  const serializer = new DefaultSerializer();
  serializer.writeRawBytes(PLACEHOLDER);
  serializer.writeHeader();
  serializer.writeValue(message);
  const frame = serializer.releaseBuffer();
  frame.writeUInt32BE(frame.length - HEADER, 0);
  return frame;
}

/**
 * Reads frames from a byte stream. `onMessage` gets each decoded message; the first frame that is
 * too long or does not decode calls `onError` once, with why, and the reader ignores everything after
 * it (the stream's framing is lost: its writer has to go).
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private broken = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onMessage: (message: unknown) => void,
    private readonly onError: (why: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken || chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.broken && this.buffered >= HEADER) {
      const head = this.chunks[0]!.length >= HEADER ? this.chunks[0]! : this.gather(HEADER);
      const length = head.readUInt32BE(0);
      if (length > this.maxBytes) {
        this.fail(`announced a message of ${length} bytes, over the channel's bound of ${this.maxBytes}`);
        return;
      }
      if (this.buffered < HEADER + length) return;
      const frame = this.gather(HEADER + length);
      this.drop(HEADER + length);
      let message: unknown;
      try {
        message = deserialize(frame.subarray(HEADER, HEADER + length));
      } catch (error) {
        this.fail(`wrote a message that does not decode (${error instanceof Error ? error.message : String(error)})`);
        return;
      }
      this.onMessage(message);
    }
  }

  /** The first `bytes` buffered, as one Buffer (the first chunk itself when it holds them). */
  private gather(bytes: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= bytes) return first;
    const whole = Buffer.concat(this.chunks, this.buffered);
    this.chunks = [whole];
    return whole;
  }

  /** Forgets the first `bytes` buffered (they lie in the first chunk: gather ran before). */
  private drop(bytes: number): void {
    const first = this.chunks[0]!;
    if (first.length === bytes) this.chunks.shift();
    else this.chunks[0] = first.subarray(bytes);
    this.buffered -= bytes;
  }

  private fail(why: string): void {
    this.broken = true;
    this.chunks = [];
    this.buffered = 0;
    this.onError(why);
  }
}
