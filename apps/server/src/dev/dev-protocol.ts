/** What `tritium model run` and `tritium dev` say over the dev socket: one JSON line each way. */

/** The most a request line may hold (inputs as JSON); a longer one is refused and the connection closed. */
export const DEV_MAX_REQUEST_BYTES = 16 * 1024 * 1024;

export interface DevRunRequest {
  readonly model: string;
  readonly version?: number;
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly outputs: readonly string[];
}

/** A line a model wrote while the run was in flight; `text` is one line, its control characters escaped by the dev server. */
export interface DevLogLine {
  readonly source: 'log' | 'stdout' | 'stderr';
  readonly level: 'error' | 'warn' | 'info' | 'verbose';
  readonly text: string;
}

/**
 * A model's line as a terminal shows it to its author: what it printed as it printed it, a log
 * call with its level (`INFO: ...`, as the author API writes outside a server).
 */
export function modelLineText(line: Pick<DevLogLine, 'source' | 'level' | 'text'>): string {
  return line.source === 'log' ? `${line.level.toUpperCase()}: ${line.text}` : line.text;
}

export type DevRunReply =
  | { readonly ok: true; readonly result: unknown; readonly logs: readonly DevLogLine[] }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly logs: readonly DevLogLine[] };
