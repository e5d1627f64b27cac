import type { InferRequest } from '../../types.ts';
import type { SequenceControls } from './controls.ts';
import type { ImplicitState } from './implicit-state.ts';
import type { Entry, Slot } from './sequence-entry.ts';

/** The batch rows a sequence model gets: a request with its control inputs and its sequence's state. */
export class SequenceRows {
  constructor(
    private readonly controls: SequenceControls,
    private readonly state: ImplicitState,
  ) {}

  /** The request the model gets for `entry` in `slot`: its inputs, the controls, the sequence's state. */
  prepare(entry: Entry, slot: Slot): InferRequest {
    if (this.state.active && (entry.start || !slot.values)) slot.values = this.state.fresh();
    entry.values = slot.values;
    const request = entry.request;
    const inputs = [...request.inputs, ...this.controls.tensors({ start: entry.start, end: entry.end, ready: true }, entry.id)];
    if (entry.values) inputs.push(...this.state.inputs(entry.values));
    const outputs = this.state.active ? this.state.requestedOutputs(request.outputs) : request.outputs;
    return { ...request, inputs, ...(outputs ? { outputs } : {}) };
  }

  /** Triton's null request: a ready request's inputs with READY false (and its state, read only). */
  filler(template: Entry, slot: Slot): InferRequest {
    const request = template.request;
    const inputs = [...request.inputs, ...this.controls.tensors({ start: false, end: false, ready: false }, undefined)];
    const values = template.values ?? slot.values ?? (this.state.active ? this.state.fresh() : undefined);
    if (values) inputs.push(...this.state.inputs(values));
    const outputs = this.state.active ? this.state.requestedOutputs(request.outputs) : request.outputs;
    return { id: request.id, model: request.model, ...(request.version !== undefined ? { version: request.version } : {}), inputs, ...(outputs ? { outputs } : {}) };
  }
}
