import { runtimeLink } from './runtime-link.ts';

/**
 * `pb_utils.Logger`: lines go to the server's log (Triton's format, tagged with the instance).
 * Outside a server (e.g. `tritium model run`) they go to stderr.
 */
export const Logger = {
  logInfo(message: string): void {
    emit('info', message);
  },
  logWarn(message: string): void {
    emit('warn', message);
  },
  logError(message: string): void {
    emit('error', message);
  },
  logVerbose(message: string): void {
    emit('verbose', message);
  },
} as const;

function emit(level: 'error' | 'warn' | 'info' | 'verbose', message: string): void {
  const link = runtimeLink();
  if (link) link.log(level, String(message));
  else process.stderr.write(`${level.toUpperCase()}: ${String(message)}\n`);
}
