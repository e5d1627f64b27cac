/**
 * A model that runs a `Loop` for as many iterations as asked (default 2^62: it never finishes), its
 * body passing the loop-carried tensor through. What a hostile upload looks like to a server: a
 * valid model whose one run keeps ONNX Runtime busy for as long as its process lives.
 */
import { GraphBuilder, type Dim } from './graph-builder.ts';

export interface LoopModelOptions {
  /** The Loop's trip count (`M`); default 2^62. */
  readonly iterations?: bigint;
  /**
   * Take the trip count from this INT64 input of shape [1] instead (each request chooses: a few
   * iterations, or 2^62), so one model can both answer and never finish.
   */
  readonly iterationsInput?: string;
  /** Full shape of INPUT0 and OUTPUT0 (FP32; default `[-1]`, a model that cannot batch). */
  readonly shape?: readonly Dim[];
}

/** OUTPUT0 = INPUT0, after `iterations` (or `iterationsInput`) iterations of a Loop that carries it through. */
export function buildLoopModel(options: LoopModelOptions = {}): Uint8Array {
  const shape = options.shape ?? [-1];
  const body = new GraphBuilder();
  body.input('iteration', 'INT64', []);
  body.input('cond_in', 'BOOL', []);
  body.input('x_in', 'FP32', undefined);
  body.output('cond_out', 'BOOL', []);
  body.output('x_out', 'FP32', undefined);
  body.node('Identity', ['cond_in'], ['cond_out']);
  body.node('Identity', ['x_in'], ['x_out']);

  const g = new GraphBuilder();
  g.input('INPUT0', 'FP32', shape);
  g.output('OUTPUT0', 'FP32', shape);
  const trips = options.iterationsInput
    ? g.op('Squeeze', [g.input(options.iterationsInput, 'INT64', [1])])
    : g.initializer('trip_count', 'INT64', [], BigInt64Array.of(options.iterations ?? 2n ** 62n));
  const keepGoing = g.initializer('keep_going', 'BOOL', [], Uint8Array.of(1));
  g.node('Loop', [trips, keepGoing, 'INPUT0'], ['OUTPUT0'], { body: { graph: body, name: 'loop_body' } });
  return g.toBytes({ graphName: 'loop' });
}
