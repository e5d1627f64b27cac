/**
 * Triton's trace file (server: tracer.cc TraceFile / TraceSetting::WriteTrace): one JSON array of
 * trace entries. With `log_frequency` 0 and no trace count, traces go to `<file>` (Triton writes
 * it at shutdown; Tritium streams each finished trace into it and closes the array at shutdown, so
 * memory stays bounded and a crash loses nothing written). With `log_frequency` N every N traces
 * are written to `<file>.0`, `<file>.1`, ... as complete arrays; with a trace count, the traces
 * collected when the count runs out go to the next indexed file whatever the frequency (Triton).
 *
 * Files are opened without following a symbolic link at their name (O_NOFOLLOW) and truncated, as
 * Triton truncates; the path comes from the operator's `--trace-config triton,file=` only. Writes are
 * asynchronous; what waits to be written is bounded (beyond it traces are dropped, counted and
 * logged once), so a slow disk never grows the server's memory without bound.
 */
import fs from 'node:fs';
import { open } from 'node:fs/promises';
import type { Logger } from '@tritium/core';

/** Bytes waiting for the disk beyond which finished traces are dropped. */
export const MAX_PENDING_TRACE_BYTES = 64 * 1024 * 1024;

const FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW;

export class TritonTraceFile {
  private index = 0;
  private main: fs.WriteStream | undefined;
  private mainWritten = false;
  private pending = 0;
  private readonly writes = new Set<Promise<void>>();
  dropped = 0;

  constructor(
    readonly path: string,
    private readonly log: Logger,
  ) {}

  /** Appends finished traces (comma-separated entries, no brackets) to `<file>`. */
  appendMain(entries: string): void {
    if (!this.reserve(entries.length)) return;
    if (!this.main) {
      let fd: number;
      try {
        fd = fs.openSync(this.path, FLAGS, 0o644);
      } catch (e) {
        this.fail(e);
        this.pending -= entries.length;
        return;
      }
      this.main = fs.createWriteStream('', { fd, autoClose: true });
      this.main.on('error', (e) => this.fail(e));
    }
    const chunk = (this.mainWritten ? ',' : '[') + entries;
    this.mainWritten = true;
    const size = entries.length;
    this.main.write(chunk, () => {
      this.pending -= size;
    });
  }

  /** Writes traces as one complete array to `<file>.<n>` (n counts up from 0). */
  writeIndexed(entries: string): void {
    if (!this.reserve(entries.length)) return;
    const name = `${this.path}.${this.index++}`;
    const job = (async () => {
      const handle = await open(name, FLAGS, 0o644);
      try {
        await handle.writeFile(`[${entries}]`);
      } finally {
        await handle.close();
      }
    })()
      .catch((e: unknown) => this.fail(e))
      .finally(() => {
        this.pending -= entries.length;
        this.writes.delete(job);
      });
    this.writes.add(job);
  }

  /** Closes `<file>`'s array and waits for every write. */
  async close(): Promise<void> {
    await Promise.all([...this.writes]);
    const main = this.main;
    this.main = undefined;
    if (main) await new Promise<void>((resolve) => main.end(']', () => resolve()));
  }

  private reserve(bytes: number): boolean {
    if (this.pending + bytes > MAX_PENDING_TRACE_BYTES) {
      if (this.dropped++ === 0) {
        this.log.warn(`trace file ${this.path}: more than ${MAX_PENDING_TRACE_BYTES} bytes of traces wait for the disk; dropping traces until it catches up`);
      }
      return false;
    }
    this.pending += bytes;
    return true;
  }

  private fail(e: unknown): void {
    this.log.error(`failed creating trace file: ${(e as Error).message}`);
  }
}

/**
 * The traces of one setting waiting for their file (Triton's trace_stream_): written per
 * log_frequency, when the count runs out, or when the setting is replaced or the server stops.
 */
export class TraceBuffer {
  private entries: string[] = [];
  private bytes = 0;

  constructor(
    private readonly file: TritonTraceFile,
    private readonly logFrequency: number,
    private readonly counted: boolean,
  ) {}

  /** One finished trace (its entries, comma-separated). `countDone`: the count ran out and every created trace is in. */
  add(trace: string, countDone: boolean): void {
    if (this.logFrequency === 0 && !this.counted) {
      this.file.appendMain(trace);
      return;
    }
    this.entries.push(trace);
    this.bytes += trace.length;
    if (countDone || (this.logFrequency !== 0 && this.entries.length >= this.logFrequency) || this.bytes > MAX_PENDING_TRACE_BYTES / 4) {
      this.flush(true);
    }
  }

  /** Writes what waits: to an indexed file, or (no log frequency) to `<file>`. */
  flush(indexed = this.logFrequency !== 0): void {
    if (this.entries.length === 0) return;
    const text = this.entries.join(',');
    this.entries = [];
    this.bytes = 0;
    if (indexed) this.file.writeIndexed(text);
    else this.file.appendMain(text);
  }
}
