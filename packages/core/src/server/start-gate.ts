/**
 * At most `limit` model instances start at once in the server (Triton's --model-load-thread-count,
 * default 4). Starting an instance is the costly part of a load (a worker importing its packages, a
 * child process, a session reading its weights): a model of 128 instances starting them all at once
 * would hold a neighbour's load and requests behind it. Waiting starts are served one model at a
 * time in turn, so a large model does not hold a small one's load behind all of its instances.
 */
import { InferError } from '../errors.ts';
import { loadAbandoned } from './abandoned-load.ts';

/** Triton's default --model-load-thread-count. */
export const DEFAULT_INSTANCE_STARTS = 4;

interface Waiter {
  readonly go: () => void;
}

export class StartGate {
  private running = 0;
  /** Waiting starts per model, in arrival order; models are served in turn. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(readonly limit: number = DEFAULT_INSTANCE_STARTS) {
    if (!Number.isInteger(limit) || limit < 1) throw new InferError('INVALID_ARG', `the number of concurrent instance starts must be a positive integer, got ${limit}`);
  }

  /**
   * Runs `start` once a slot is free (at most `limit` at once); rejects without running it when
   * `signal` aborts first (a stop abandoning the load).
   */
  async run<T>(model: string, start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(model, signal);
    try {
      return await start();
    } finally {
      this.release();
    }
  }

  private acquire(model: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(loadAbandoned());
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const queue = this.waiting.get(model);
        const i = queue?.indexOf(waiter) ?? -1;
        if (queue && i >= 0) queue.splice(i, 1);
        if (queue?.length === 0) this.waiting.delete(model);
        reject(loadAbandoned());
      };
      const waiter: Waiter = {
        go: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.waiting.get(model);
      if (queue) queue.push(waiter);
      else this.waiting.set(model, [waiter]);
    });
  }

  /** Hands the slot to the first waiter of the next model in turn (the model then goes to the back). */
  private release(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.running--;
      return;
    }
    const [model, queue] = next.value;
    const waiter = queue.shift()!;
    this.waiting.delete(model);
    if (queue.length > 0) this.waiting.set(model, queue);
    waiter.go();
  }
}
