/**
 * How every transport stops: `close` stops accepting and calls back once in-flight work has
 * finished; past `timeoutMs`, `force` cuts what is left and the stop resolves anyway, so a hung
 * client can never hold a shutdown.
 */
export function gracefulStop(close: (done: () => void) => void, force: () => void, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      force();
      resolve();
    }, timeoutMs);
    timer.unref();
    close(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
