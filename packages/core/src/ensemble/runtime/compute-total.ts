/** Sums the compute durations the composing models of one ensemble request (or pipeline batch) report. */
import type { ComputeDurations, ComputeSink } from '../../types.ts';

export class ComputeTotal implements ComputeSink {
  private input = 0;
  private infer = 0;
  private output = 0;

  add(d: ComputeDurations): void {
    this.input += d.computeInputNs;
    this.infer += d.computeInferNs;
    this.output += d.computeOutputNs;
  }

  durations(): ComputeDurations {
    return { computeInputNs: this.input, computeInferNs: this.infer, computeOutputNs: this.output };
  }
}
