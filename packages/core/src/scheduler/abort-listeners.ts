/**
 * Abort listeners on a request's signal, kept in a plain Set behind ONE listener per signal. Every
 * request's answer path listens on its signal twice (the request guard and the scheduler) and
 * stops listening once answered: on Node's EventTarget, an add and a remove cost ~1.2 us of
 * main-thread CPU together, a Set's add and delete ~0.1 us. A transport's signal may serve many
 * requests (HTTP: one per connection), so the one EventTarget listener is added once per signal and
 * never removed; it goes with the signal (WeakMap).
 *
 * Same semantics as `addEventListener('abort', fn, { once: true })` and its removal: listeners run
 * once, in the order they were added; one removed during the dispatch (an earlier listener
 * answered its request) is not called, one added during it is not either.
 */

const listenersOf = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once when `signal` aborts (not if it is already aborted: check first); returns its removal. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let listeners = listenersOf.get(signal);
  if (!listeners) {
    const set = new Set<() => void>();
    listeners = set;
    listenersOf.set(signal, set);
    signal.addEventListener('abort', () => dispatch(set), { once: true });
  }
  listeners.add(fn);
  return () => void listeners.delete(fn);
}

function dispatch(listeners: Set<() => void>): void {
  for (const fn of [...listeners]) {
    if (!listeners.delete(fn)) continue;
    try {
      fn();
    } catch (error) {
      // As an EventTarget listener's exception: reported as uncaught, the other listeners still run.
      process.nextTick(() => {
        throw error;
      });
    }
  }
}
