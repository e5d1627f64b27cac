/**
 * What a model writes that reaches the server's log, bounded per instance: a process-isolated
 * child's stdout and stderr (pipes the server reads; the child never holds the server's own fds, so
 * it cannot truncate or rewrite the server's log) and the model's log calls (`ctx.log`, the
 * python-like `Logger`). Each line is logged through the server's logger, so it carries the server's
 * own prefix; stdout and stderr lines also name model, version and instance, and a log call's
 * message is logged one line at a time (a newline in it cannot forge a line of the server's).
 *
 * Bounds (per instance, across its restarts):
 * - a line is cut at MAX_WORKER_LOG_CHARS bytes (the rest of it is skipped, never buffered);
 * - at most `bytesPerSec` bytes of lines are logged per second, each line counted as at least
 *   MIN_LINE_COST bytes (so a flood of empty lines is bounded too); lines past it are dropped and
 *   counted (`droppedLines`), and one line per second says how many were;
 * - the server reads at most READ_FACTOR times that (at least 64 KiB) from the pipes per second,
 *   then stops reading until the next second: a model that floods its output waits in its own
 *   writes once the pipe's buffer is full, and costs the server nothing more.
 */
import type { Readable } from 'node:stream';
import type { Logger, ModelLogLine } from '../logger.ts';
import type { LogLevel } from './protocol.ts';
import { MAX_WORKER_LOG_CHARS } from './wire-check.ts';

/** `--model-log-rate` when not given: bytes of output per second and instance that reach the log. */
export const DEFAULT_MODEL_LOG_BYTES_PER_SEC = 64 * 1024;
/** What one line costs at least against the rate (logging a line costs the server more than its bytes). */
export const MIN_LINE_COST = 128;
/** How much more than the log rate the server reads from a child's pipes per second (lines past the rate are read and dropped). */
export const READ_FACTOR = 16;
/** The read bound's floor, so a rate of 0 (log nothing) still lets a child write (its output is dropped). */
const MIN_READ_BYTES_PER_SEC = 64 * 1024;
const WINDOW_MS = 1000;
const NEWLINE = 0x0a;

/** One stream's line being assembled: at most MAX_WORKER_LOG_CHARS bytes are kept. */
interface PartialLine {
  chunks: Buffer[];
  kept: number;
  /** Bytes of the line seen so far, kept or not. */
  total: number;
}

/** Who writes through a ModelOutput (the instance of a model version). */
export interface ModelOutputWriter {
  readonly model: string;
  readonly version?: number;
  readonly instance: string;
}

export class ModelOutput {
  /** Lines dropped over the rate, since the instance started (a counter for metrics). */
  droppedLines = 0;
  private windowStart = 0;
  private logged = 0;
  private read = 0;
  private pendingDrops = { lines: 0, bytes: 0 };
  private reportTimer: NodeJS.Timeout | undefined;
  private readonly readBound: number;
  /** Who wrote it, e.g. `model 'm' version 1 instance 'm_0_0'`. */
  private readonly label: string;

  constructor(
    private readonly writer: ModelOutputWriter,
    private readonly log: Logger,
    private readonly bytesPerSec: number = DEFAULT_MODEL_LOG_BYTES_PER_SEC,
  ) {
    this.readBound = Math.max(MIN_READ_BYTES_PER_SEC, bytesPerSec * READ_FACTOR);
    this.label = `model '${writer.model}'${writer.version !== undefined ? ` version ${writer.version}` : ''} instance '${writer.instance}'`;
  }

  /** A log call of the model's code: each of its lines is logged at `level`, within the rate. */
  message(level: LogLevel, message: string, verbosity = 1): void {
    for (const line of message.split('\n')) {
      if (!this.admit(Buffer.byteLength(line))) continue;
      if (this.log.model) this.log.model(this.line('log', level, line, verbosity));
      else if (level === 'verbose') this.log.verbose(verbosity, line);
      else this.log[level](line);
    }
  }

  private line(source: ModelLogLine['source'], level: LogLevel, text: string, verbosity?: number): ModelLogLine {
    const { model, version, instance } = this.writer;
    return { model, ...(version !== undefined ? { version } : {}), instance, source, level, ...(verbosity !== undefined ? { verbosity } : {}), text, label: this.label };
  }

  /**
   * Reads one child's stdout and stderr until they end: stdout lines are logged as info, stderr
   * lines as warnings. While `muted()` is true (the child is dying of an out-of-memory, whose report
   * is noise once the cause is known) lines are read and not logged.
   */
  attach(stdout: Readable, stderr: Readable, muted: () => boolean = () => false): void {
    this.follow(stdout, 'stdout', 'info', muted);
    this.follow(stderr, 'stderr', 'warn', muted);
  }

  private follow(stream: Readable, name: 'stdout' | 'stderr', level: 'info' | 'warn', muted: () => boolean): void {
    const line: PartialLine = { chunks: [], kept: 0, total: 0 };
    const emit = (): void => {
      const bytes = line.chunks.length === 1 ? line.chunks[0]! : Buffer.concat(line.chunks, line.kept);
      const cut = line.total > line.kept;
      const total = line.total;
      line.chunks = [];
      line.kept = 0;
      line.total = 0;
      if (muted() || !this.admit(total)) return;
      let text = bytes.toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (cut) text += ` ... [line cut: ${total} bytes]`;
      if (this.log.model) this.log.model(this.line(name, level, text));
      else this.log[level](`${this.label} ${name}: ${text}`);
    };
    const append = (piece: Buffer): void => {
      line.total += piece.length;
      const room = MAX_WORKER_LOG_CHARS - line.kept;
      if (room <= 0 || piece.length === 0) return;
      const kept = piece.length <= room ? piece : piece.subarray(0, room);
      // A copy: the chunk's memory is not kept alive by a short piece of it.
      line.chunks.push(Buffer.from(kept));
      line.kept += kept.length;
    };
    stream.on('data', (chunk: Buffer) => {
      this.roll();
      this.read += chunk.length;
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
        append(chunk.subarray(start, nl));
        emit();
        start = nl + 1;
      }
      if (start < chunk.length) append(chunk.subarray(start));
      if (this.read >= this.readBound) this.pauseUntilNextWindow(stream);
    });
    stream.on('end', () => {
      if (line.total > 0) emit();
    });
    stream.on('error', () => {});
  }

  /** Stops reading `stream` for the rest of this second: the child's writes block meanwhile. */
  private pauseUntilNextWindow(stream: Readable): void {
    stream.pause();
    const timer = setTimeout(() => stream.resume(), Math.max(1, this.windowStart + WINDOW_MS - Date.now()));
    timer.unref();
  }

  /** Starts a new one-second window when the current one is over. */
  private roll(): void {
    const now = Date.now();
    if (now - this.windowStart < WINDOW_MS) return;
    this.windowStart = now;
    this.logged = 0;
    this.read = 0;
  }

  /** Whether a line of `bytes` fits in this second's rate; counts it as dropped when not. */
  private admit(bytes: number): boolean {
    this.roll();
    const cost = Math.max(MIN_LINE_COST, Math.min(bytes, MAX_WORKER_LOG_CHARS));
    if (this.logged + cost <= this.bytesPerSec) {
      this.logged += cost;
      return true;
    }
    this.droppedLines++;
    this.pendingDrops.lines++;
    this.pendingDrops.bytes += bytes;
    this.reportTimer ??= setTimeout(() => this.reportDrops(), Math.max(1, this.windowStart + WINDOW_MS - Date.now()));
    this.reportTimer.unref();
    return false;
  }

  private reportDrops(): void {
    this.reportTimer = undefined;
    const { lines, bytes } = this.pendingDrops;
    this.pendingDrops = { lines: 0, bytes: 0 };
    if (lines === 0) return;
    this.log.warn(
      `${this.label}: ${lines} line(s) of its output (${bytes} bytes) dropped: over the bound of ${this.bytesPerSec} bytes per second (--model-log-rate)`,
    );
  }
}
