/** Minimal logging seam: core and backends log through this; the server renders Triton's format. */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  verbose(level: number, message: string): void;
}

/** A logger that drops everything (library default). */
export const silentLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  verbose() {},
};
