/**
 * Op-level test models: Triton's `simple` add/sub, identity for every element type, an int64
 * sequence model with dynamic batch and sequence axes, and scalar I/O. Every builder returns the
 * encoded model bytes; shapes are FULL shapes (a batching model's first dim is `'batch'` or -1).
 */
import { GraphBuilder, type Dim } from './graph-builder.ts';
import { ONNX_ELEMENT_TYPE, type ElementType } from './dtypes.ts';

export interface AddSubOptions {
  /** Input element type (default INT32, as Triton's `simple`). */
  readonly dtype?: ElementType;
  /** Output element type; differs from `dtype` → a Cast is added (Triton's test models cast to INT8). */
  readonly outputDtype?: ElementType;
  /** Full input/output shape (default `['batch', 16]`; `[16]` makes a model that cannot batch). */
  readonly shape?: readonly Dim[];
  readonly inputNames?: readonly [string, string];
  readonly outputNames?: readonly [string, string];
}

/** OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 − INPUT1 (Triton's `simple` model). */
export function buildAddSubModel(options: AddSubOptions = {}): Uint8Array {
  const dtype = options.dtype ?? 'INT32';
  const outType = options.outputDtype ?? dtype;
  const shape = options.shape ?? ['batch', 16];
  const [in0, in1] = options.inputNames ?? ['INPUT0', 'INPUT1'];
  const [out0, out1] = options.outputNames ?? ['OUTPUT0', 'OUTPUT1'];
  const g = new GraphBuilder();
  g.input(in0, dtype, shape);
  g.input(in1, dtype, shape);
  g.output(out0, outType, shape);
  g.output(out1, outType, shape);
  const cast = outType !== dtype;
  const sum = g.node('Add', [in0, in1], cast ? 1 : [out0])[0]!;
  const diff = g.node('Sub', [in0, in1], cast ? 1 : [out1])[0]!;
  if (cast) {
    const to = { int: onnxTypeNumber(outType) };
    g.node('Cast', [sum], [out0], { to });
    g.node('Cast', [diff], [out1], { to });
  }
  return g.toBytes({ graphName: 'add_sub' });
}

/** A model that cannot batch: fixed first dimension (add/sub over `[16]`). */
export function buildNoBatchModel(options: Omit<AddSubOptions, 'shape'> & { readonly shape?: readonly number[] } = {}): Uint8Array {
  return buildAddSubModel({ ...options, shape: options.shape ?? [16] });
}

export interface IdentityOptions {
  readonly dtype: ElementType;
  /** Full shape (default `['batch', -1]`). */
  readonly shape?: readonly Dim[];
  readonly inputName?: string;
  readonly outputName?: string;
}

/** OUTPUT0 = INPUT0, for any element type (FP16, BOOL and BYTES included). */
export function buildIdentityModel(options: IdentityOptions): Uint8Array {
  const shape = options.shape ?? ['batch', -1];
  const input = options.inputName ?? 'INPUT0';
  const output = options.outputName ?? 'OUTPUT0';
  const g = new GraphBuilder();
  g.input(input, options.dtype, shape);
  g.output(output, options.dtype, shape);
  g.node('Identity', [input], [output]);
  return g.toBytes({ graphName: `identity_${options.dtype.toLowerCase()}` });
}

/**
 * One identity per element type in one graph: `INPUT_<TYPE>` → `OUTPUT_<TYPE>` (e.g. `INPUT_FP16`),
 * so a single session exercises every type. Default shape `['batch', -1]`.
 */
export function buildMultiIdentityModel(dtypes: readonly ElementType[], shape: readonly Dim[] = ['batch', -1]): Uint8Array {
  const g = new GraphBuilder();
  for (const dtype of dtypes) g.input(`INPUT_${dtype}`, dtype, shape);
  for (const dtype of dtypes) {
    g.output(`OUTPUT_${dtype}`, dtype, shape);
    g.node('Identity', [`INPUT_${dtype}`], [`OUTPUT_${dtype}`]);
  }
  return g.toBytes({ graphName: 'multi_identity' });
}

export interface SequenceOptions {
  /** Input name (default `input_ids`). */
  readonly inputName?: string;
  /** Output names (default `doubled`, `row_sum`). */
  readonly outputNames?: readonly [string, string];
}

/**
 * An INT64 model with dynamic batch and sequence axes: `input_ids` [batch, seq] →
 * `doubled` [batch, seq] = 2·x and `row_sum` [batch, 1] = Σ over the sequence.
 */
export function buildSequenceModel(options: SequenceOptions = {}): Uint8Array {
  const input = options.inputName ?? 'input_ids';
  const [doubled, rowSum] = options.outputNames ?? ['doubled', 'row_sum'];
  const g = new GraphBuilder();
  g.input(input, 'INT64', ['batch', 'sequence']);
  g.output(doubled, 'INT64', ['batch', 'sequence']);
  g.output(rowSum, 'INT64', ['batch', 1]);
  const two = g.int64s('two', [], [2]);
  g.node('Mul', [input, two], [doubled]);
  const axes = g.int64s('axes', [1], [1]);
  g.node('ReduceSum', [input, axes], [rowSum], { keepdims: { int: 1 } });
  return g.toBytes({ graphName: 'sequence' });
}

export interface ScalarOptions {
  readonly dtype?: ElementType;
  readonly inputName?: string;
  readonly outputName?: string;
}

/** Scalar in, scalar out: OUTPUT0 = INPUT0 · 2 (numeric types; default FP32). */
export function buildScalarModel(options: ScalarOptions = {}): Uint8Array {
  const dtype = options.dtype ?? 'FP32';
  const input = options.inputName ?? 'INPUT0';
  const output = options.outputName ?? 'OUTPUT0';
  const g = new GraphBuilder();
  g.input(input, dtype, []);
  g.output(output, dtype, []);
  const two = g.op('Cast', [g.floats('two', [], [2])], { to: { int: onnxTypeNumber(dtype) } });
  g.node('Mul', [input, two], [output]);
  return g.toBytes({ graphName: 'scalar' });
}

function onnxTypeNumber(type: ElementType): number {
  return ONNX_ELEMENT_TYPE[type];
}
