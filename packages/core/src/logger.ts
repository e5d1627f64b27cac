/** Minimal logging seam: core and backends log through this; the server renders Triton's format. */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  verbose(level: number, message: string): void;
  /**
   * What a model wrote (a log call, or a line of a process-isolated child's stdout or stderr), with
   * who wrote it. Optional: without it the line goes to `info`/`warn`/`error`/`verbose` (stdout and
   * stderr lines prefixed with `ModelLogLine.label`). A host implements it to route the model's own
   * output (a terminal, a test's capture) apart from the server's messages.
   */
  model?(line: ModelLogLine): void;
  /**
   * A block the server made itself, a table (`formatTable`, whose cells hold no control character
   * but line feeds, each inside the table's borders): logged as Triton logs one, its first line
   * after the prefix and the rest as they are. Optional: without it `logBlock` logs it at `level`.
   */
  block?(level: 'info' | 'warn' | 'error', text: string): void;
}

/** Logs a table the server made (see Logger.block). */
export function logBlock(log: Logger, level: 'info' | 'warn' | 'error', text: string): void {
  if (log.block) log.block(level, text);
  else log[level](text);
}

/** One line a model wrote (see `Logger.model`); `text` holds no line break. */
export interface ModelLogLine {
  readonly model: string;
  readonly version?: number;
  readonly instance: string;
  /** `log`: the model's log call (`Logger.logInfo`, `ctx.log`); `stdout`/`stderr`: a line it printed. */
  readonly source: 'log' | 'stdout' | 'stderr';
  readonly level: 'error' | 'warn' | 'info' | 'verbose';
  /** Verbosity of a `verbose` log call. */
  readonly verbosity?: number;
  readonly text: string;
  /** `model 'm' version 1 instance 'm_0'`: how the server's log names the writer. */
  readonly label: string;
}

/** A logger that drops everything (library default). */
export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  verbose() {},
};

/** Control characters other than tab and line feed, DEL, C1 controls, and Unicode's line and paragraph separators. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/g;

function escapeChar(c: string): string {
  if (c === '\r') return '\\r';
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * A message as the lines a log writes, each to get its own prefix: split at line feeds, every
 * other control character escaped (`\r`, `\x1b`, ...). Text that came from a model (an error it
 * threw, a crash cause, what it printed) therefore cannot start a line that looks like the
 * server's, nor move a terminal's cursor. Every log sink of the server writes through it.
 */
export function logLines(message: string): string[] {
  return escapeControl(message).split('\n');
}

/** `text` with every control character but tab and line feed escaped (see logLines). */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}
