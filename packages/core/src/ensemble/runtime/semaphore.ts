/** A counting semaphore with FIFO waiters (ensemble `max_inflight_requests` back-pressure). */
export class Semaphore {
  private available: number;
  private readonly waiters: (() => void)[] = [];

  /** `permits` ≤ 0 means unlimited. */
  constructor(private readonly permits: number) {
    this.available = permits;
  }

  /** Resolves once a permit is held. Like Triton, waiting has no timeout and ignores cancellation. */
  acquire(): Promise<void> {
    if (this.permits <= 0) return Promise.resolve();
    if (this.available > 0) {
      this.available--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    if (this.permits <= 0) return;
    const next = this.waiters.shift();
    if (next) next();
    else this.available++;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.waiters.length;
  }
}
