/**
 * The loggers of the CLI's one-shot commands (`model run`, `config`, `dev`'s clients): plain
 * prefixed lines on a stream, each line of a message prefixed on its own with control characters
 * escaped (core's logLines), so nothing a model wrote can pass for a line of the CLI's.
 */
import { logLines, type ModelLogLine } from '@tritium/core';
import { modelLineText } from '../dev/dev-protocol.ts';

export type WriteText = (text: string) => unknown;

/** Writes `message` as lines, each starting with `prefix`. */
export function writeLines(write: WriteText, prefix: string, message: string): void {
  write(logLines(message).map((line) => `${prefix}${line}\n`).join(''));
}

/** Writes a model's line (see modelLineText), escaped. */
export function writeModelLine(write: WriteText, line: Pick<ModelLogLine, 'source' | 'level' | 'text'>): void {
  writeLines(write, '', modelLineText(line));
}
