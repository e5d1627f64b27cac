/**
 * Triton's log line format: `I1121 22:10:05.123456 <pid> file.ts:line] msg` (default) or
 * `2026-11-21T22:10:05Z I <pid> file.ts:line] msg` (ISO8601). Implements core's Logger so core
 * and backends log through it.
 */
import fs from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logLines, type Logger, type ModelLogLine } from '@tritium/core';

/** This module's file name (`triton-log.js` compiled, `triton-log.ts` in tests): its frames are skipped. */
const SELF = basename(fileURLToPath(import.meta.url));

/** Core's forwarding helpers (`logBlock` in @tritium/core's logger): the line names their caller. */
const FORWARDER = /[\\/]core[\\/](?:dist|src)[\\/]logger\.(?:js|ts):/;

export interface TritonLogOptions {
  info: boolean;
  warning: boolean;
  error: boolean;
  verbose: number;
  format: 'default' | 'ISO8601';
  file?: string;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Formats one line (exported for tests). */
export function formatLogLine(level: 'I' | 'W' | 'E' | 'V', message: string, where: string, format: 'default' | 'ISO8601', now = new Date()): string {
  const micros = pad(now.getMilliseconds(), 3) + '000';
  if (format === 'ISO8601') {
    const iso = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
    return `${iso} ${level} ${process.pid} ${where}] ${message}\n`;
  }
  const stamp = `${pad(now.getMonth() + 1)}${pad(now.getDate())} ${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${micros}`;
  return `${level}${stamp} ${process.pid} ${where}] ${message}\n`;
}

/** `file.js:line` of the caller outside this module (cheap enough for log lines). */
function callerSite(): string {
  const stack = new Error().stack?.split('\n') ?? [];
  for (const line of stack.slice(3)) {
    if (line.includes(SELF) || FORWARDER.test(line)) continue;
    const m = /([^/\\(\s]+\.(?:ts|js|mjs)):(\d+)/.exec(line);
    if (m) return `${m[1]}:${m[2]}`;
  }
  return 'tritium:0';
}

export class TritonLog implements Logger {
  private fd: number | undefined;
  private readonly modelListeners = new Set<(line: ModelLogLine) => void>();

  /** `options.file` (`--log-file`) is opened here once: nothing changes it afterwards (see LOG_FILE_UPDATE_MESSAGE). */
  constructor(
    readonly options: TritonLogOptions,
    private readonly stream: NodeJS.WritableStream = process.stderr,
  ) {
    if (options.file) this.fd = fs.openSync(options.file, 'a');
  }

  /** Each line of the message gets its own prefix; control characters are escaped (see logLines). */
  private write(level: 'I' | 'W' | 'E' | 'V', message: string): void {
    const where = callerSite();
    const now = new Date();
    this.emit(logLines(message).map((line) => formatLogLine(level, line, where, this.options.format, now)).join(''));
  }

  private emit(text: string): void {
    if (this.fd !== undefined) fs.writeSync(this.fd, text);
    else this.stream.write(text);
  }

  /** Calls `listener` with every line a model writes until the returned function is called (tritium dev's runs). */
  listenToModels(listener: (line: ModelLogLine) => void): () => void {
    this.modelListeners.add(listener);
    return () => void this.modelListeners.delete(listener);
  }

  /** A table the server made: its first line after the prefix, the rest as Triton prints them (see Logger.block). */
  block(level: 'info' | 'warn' | 'error', text: string): void {
    const on = { info: this.options.info, warn: this.options.warning, error: this.options.error }[level];
    if (!on) return;
    const [first = '', ...rest] = logLines(text);
    const letter = ({ info: 'I', warn: 'W', error: 'E' } as const)[level];
    this.emit(formatLogLine(letter, first, callerSite(), this.options.format) + rest.map((l) => `${l}\n`).join(''));
  }

  /** A model's log call reads as the server's line at its level; what it printed names the writer. */
  model(line: ModelLogLine): void {
    for (const listener of this.modelListeners) listener(line);
    const text = line.source === 'log' ? line.text : `${line.label} ${line.source}: ${line.text}`;
    if (line.level === 'verbose') this.verbose(line.verbosity ?? 1, text);
    else this[line.level](text);
  }

  error(message: string): void {
    if (this.options.error) this.write('E', message);
  }

  warn(message: string): void {
    if (this.options.warning) this.write('W', message);
  }

  info(message: string): void {
    if (this.options.info) this.write('I', message);
  }

  verbose(level: number, message: string): void {
    if (this.options.verbose >= level) this.write('V', message);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
