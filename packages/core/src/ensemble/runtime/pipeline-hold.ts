/**
 * When a pipeline ensemble's batcher should hold a small batch (BatcherDeps.hold): only while the
 * pipeline's last step is busy, and only until a new batch would reach that step as it frees.
 *
 * Why: under a closed loop, a pipeline settles in waves. With two pipeline slots and a slow last
 * step (the model), a wave that waited past the queue delay for a slot is sent the moment one frees,
 * a millisecond before the wave that just finished comes back, so the two never merge: three waves of
 * ~21 instead of two of ~32, every run that happens to start that way. Sending it early buys nothing:
 * it would wait in the last step's queue until that step frees. Held until then, the returning wave
 * joins it (or fills the smallest preferred size, which sends at once).
 *
 * What it observes (the pipeline's own calls to its steps, nothing else): the last step's service
 * time per batch (from the later of its call and the step's previous completion, to its
 * completion) and the time each earlier step takes, as moving averages. A batch is held until
 * the last step's running batch is expected to end, less the earlier steps' time, and never longer
 * than `maxHoldUs` (the config's max queue delay).
 */
import type { InferRequest, InferResponse } from '../../types.ts';
import type { BatchHold } from '../../scheduler/batch-hold.ts';

/** Weight of the newest sample in the moving averages. */
const ALPHA = 0.25;

export interface PipelineHoldOptions {
  /** The model of the pipeline's last step. */
  readonly lastModel: string;
  /** Instances of the last step's model now (a reload may change them): it is busy only when as many batches are in it. */
  readonly lastInstances: () => number;
  readonly maxHoldUs: number;
  readonly nowUs: () => number;
}

export class PipelineHold implements BatchHold {
  private serviceUs: number | undefined;
  /** Each earlier step's time (by model); their sum is how long a new batch takes to reach the last step. */
  private readonly stepUs = new Map<string, number>();
  private lastDoneUs = Number.NEGATIVE_INFINITY;
  /** Call times of the pipeline's requests now in the last step, oldest first. */
  private readonly inLast: number[] = [];

  constructor(private readonly o: PipelineHoldOptions) {}

  /** Wraps the server's `infer` so the pipeline's step calls are observed. */
  observe(infer: (r: InferRequest) => Promise<InferResponse>): (r: InferRequest) => Promise<InferResponse> {
    return (request) => {
      const calledUs = this.o.nowUs();
      const last = request.model === this.o.lastModel;
      if (last) this.inLast.push(calledUs);
      const settled = (): void => this.settled(request.model, last, calledUs);
      const pending = infer(request);
      pending.then(settled, settled);
      return pending;
    };
  }

  private settled(model: string, last: boolean, calledUs: number): void {
    const now = this.o.nowUs();
    if (!last) {
      const prev = this.stepUs.get(model);
      const sample = now - calledUs;
      this.stepUs.set(model, prev === undefined ? sample : prev + ALPHA * (sample - prev));
      return;
    }
    const i = this.inLast.indexOf(calledUs);
    if (i >= 0) this.inLast.splice(i, 1);
    const sample = now - Math.max(calledUs, this.lastDoneUs);
    this.serviceUs = this.serviceUs === undefined ? sample : this.serviceUs + ALPHA * (sample - this.serviceUs);
    this.lastDoneUs = now;
  }

  holdUs(nowUs: number): number {
    if (this.serviceUs === undefined || this.inLast.length < this.o.lastInstances()) return 0;
    // The oldest batch in the last step started when it was called or when the step last freed.
    const startedUs = Math.max(this.inLast[0]!, this.lastDoneUs);
    const freeUs = startedUs + this.serviceUs;
    // Summed, steps that run side by side count twice: the hold only gets shorter (safe).
    let leadUs = 0;
    for (const us of this.stepUs.values()) leadUs += us;
    return Math.min(this.o.maxHoldUs, Math.max(0, freeUs - leadUs - nowUs));
  }
}
