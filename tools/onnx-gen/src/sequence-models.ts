/**
 * Stateful-model graphs for the sequence batcher, shaped like Triton's example repository models
 * (docs/examples/model_repository `simple_sequence`, `simple_dyna_sequence`): the control inputs
 * the sequence batcher adds are plain model inputs, INT32 `['batch', 1]`.
 */
import { GraphBuilder } from './graph-builder.ts';

export interface SequenceControlModelOptions {
  /**
   * false (default): Triton's `simple_sequence`, OUTPUT = READY · (INPUT + START).
   * true: `simple_dyna_sequence`, OUTPUT = READY · (INPUT + START + END · CORRID), with CORRID UINT64.
   */
  readonly dyna?: boolean;
}

/** Triton's example sequence models as graphs (INPUT/OUTPUT INT32 `['batch', 1]`). */
export function buildSequenceControlModel(options: SequenceControlModelOptions = {}): Uint8Array {
  const g = new GraphBuilder();
  const shape = ['batch', 1] as const;
  g.input('INPUT', 'INT32', shape);
  g.input('START', 'INT32', shape);
  if (options.dyna) g.input('END', 'INT32', shape);
  g.input('READY', 'INT32', shape);
  if (options.dyna) g.input('CORRID', 'UINT64', shape);
  g.output('OUTPUT', 'INT32', shape);
  let sum = g.op('Add', ['INPUT', 'START']);
  if (options.dyna) {
    const corrid = g.op('Cast', ['CORRID'], { to: { int: 6 } });
    sum = g.op('Add', [sum, g.op('Mul', ['END', corrid])]);
  }
  g.node('Mul', ['READY', sum], ['OUTPUT']);
  return g.toBytes({ graphName: options.dyna ? 'onnx_dyna_sequence_int32' : 'onnx_sequence_int32' });
}

/**
 * An accumulator over implicit state: OUTPUT = INPUT + INPUT_STATE, and the same value as
 * OUTPUT_STATE (the sequence batcher feeds it back as INPUT_STATE on the sequence's next request).
 * INT32 `['batch', 1]`; a START control resets nothing itself: the sequence's state starts at zero.
 */
export function buildAccumulatorStateModel(): Uint8Array {
  const g = new GraphBuilder();
  const shape = ['batch', 1] as const;
  g.input('INPUT', 'INT32', shape);
  g.input('START', 'INT32', shape);
  g.input('INPUT_STATE', 'INT32', shape);
  g.output('OUTPUT', 'INT32', shape);
  g.output('OUTPUT_STATE', 'INT32', shape);
  const sum = g.op('Add', ['INPUT', 'INPUT_STATE']);
  g.node('Identity', [sum], ['OUTPUT']);
  g.node('Identity', [sum], ['OUTPUT_STATE']);
  return g.toBytes({ graphName: 'accumulator_state' });
}
