/**
 * Waits for `work` at most `ms`: true if it settled (either way) in time, false if the wait gave up.
 * The timer is cleared either way, so a stop that uses this leaves nothing scheduled behind it.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settled = work.then(
    () => true,
    () => true,
  );
  const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  try {
    return await Promise.race([settled, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}
