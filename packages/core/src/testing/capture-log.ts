import type { Logger } from '../logger.ts';

/** A Logger that keeps every line (`E `/`W `/`I `/`V ` + message), for asserting on warnings in tests. */
export interface CapturedLog extends Logger {
  readonly lines: string[];
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  return {
    lines,
    error: (m) => lines.push(`E ${m}`),
    warn: (m) => lines.push(`W ${m}`),
    info: (m) => lines.push(`I ${m}`),
    verbose: (_l, m) => lines.push(`V ${m}`),
  };
}
