/**
 * The log of what reading a model says along the way (a backend's auto-complete: "skipping model
 * configuration auto-complete ...", "autofilled max_batch_size ..."): each distinct line at most
 * once per model. Poll mode reads every model on every poll, and these lines would otherwise
 * repeat each time although nothing changed.
 */
import type { Logger } from '../logger.ts';

/** Distinct lines remembered per model; past it, lines are logged without being remembered. */
export const ROUTINE_LINES_PER_MODEL = 64;

export class RoutineLog {
  private readonly seen = new Map<string, Set<string>>();

  constructor(private readonly log: Logger) {}

  /** The logger for reading `model`: a line already logged for it is dropped. */
  for(model: string): Logger {
    const once = (level: string, message: string, write: () => void): void => {
      let lines = this.seen.get(model);
      if (!lines) this.seen.set(model, (lines = new Set()));
      const key = `${level}\0${message}`;
      if (lines.has(key)) return;
      if (lines.size < ROUTINE_LINES_PER_MODEL) lines.add(key);
      write();
    };
    const log = this.log;
    return {
      error: (m) => once('E', m, () => log.error(m)),
      warn: (m) => once('W', m, () => log.warn(m)),
      info: (m) => once('I', m, () => log.info(m)),
      verbose: (level, m) => once(`V${level}`, m, () => log.verbose(level, m)),
      ...(log.model ? { model: log.model.bind(log) } : {}),
    };
  }
}
