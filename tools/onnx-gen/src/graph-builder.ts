/**
 * A small builder over ONNX's ModelProto: graph inputs/outputs with symbolic dims, initializers
 * stored as raw little-endian bytes, nodes with attributes. Names are unique per builder and every
 * collection keeps insertion order, so the same calls always encode to the same bytes.
 */
import { onnx, type OnnxTypes } from './proto.ts';
import { ONNX_ELEMENT_TYPE, type ElementType } from './dtypes.ts';

/** A dimension: a fixed size, a symbolic name (`'batch'`), or -1 for an unnamed unknown size. */
export type Dim = number | string;

/** Attribute values a node may carry (numbers are floats unless listed in `ints`). */
export type AttributeValue =
  | { readonly int: number }
  | { readonly float: number }
  | { readonly ints: readonly number[] }
  | { readonly floats: readonly number[] }
  | { readonly string: string }
  /** A subgraph (the body of a Loop, the branches of an If), built with its own GraphBuilder. */
  | { readonly graph: GraphBuilder; readonly name: string };

export type InitializerValues =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

export interface ModelOptions {
  /** Default opset (ai.onnx domain): 17, the first with LayerNormalization. */
  readonly opset?: number;
  /** Default IR version 8 (what opset 17 needs). */
  readonly irVersion?: number;
  readonly producerName?: string;
  readonly graphName?: string;
}

function valueInfo(name: string, type: ElementType, dims: readonly Dim[] | undefined): OnnxTypes.IValueInfoProto {
  const shape =
    dims === undefined
      ? undefined
      : {
          dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : d < 0 ? {} : { dimValue: d })),
        };
  return { name, type: { tensorType: { elemType: ONNX_ELEMENT_TYPE[type], ...(shape ? { shape } : {}) } } };
}

export class GraphBuilder {
  private readonly inputs: OnnxTypes.IValueInfoProto[] = [];
  private readonly outputs: OnnxTypes.IValueInfoProto[] = [];
  private readonly initializers: OnnxTypes.ITensorProto[] = [];
  private readonly nodes: OnnxTypes.INodeProto[] = [];
  private readonly used = new Set<string>();
  private counter = 0;

  /** A fresh tensor name starting with `prefix`. */
  name(prefix: string): string {
    let candidate = prefix;
    while (this.used.has(candidate)) candidate = `${prefix}_${++this.counter}`;
    this.used.add(candidate);
    return candidate;
  }

  /** Declares a graph input (dims undefined: unknown rank). Returns its name. */
  input(name: string, type: ElementType, dims: readonly Dim[] | undefined): string {
    this.used.add(name);
    this.inputs.push(valueInfo(name, type, dims));
    return name;
  }

  /** Declares a graph output that node(s) must produce under `name`. */
  output(name: string, type: ElementType, dims: readonly Dim[] | undefined): string {
    this.used.add(name);
    this.outputs.push(valueInfo(name, type, dims));
    return name;
  }

  /** Adds a constant tensor (weights); returns its (unique) name. */
  initializer(prefix: string, type: ElementType, dims: readonly number[], values: InitializerValues): string {
    const name = this.name(prefix);
    const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    // Copy so later mutation of `values` by the caller cannot change the model.
    this.initializers.push({ name, dataType: ONNX_ELEMENT_TYPE[type], dims: [...dims], rawData: raw.slice() });
    return name;
  }

  /** Float32 constant. */
  floats(prefix: string, dims: readonly number[], values: ArrayLike<number>): string {
    return this.initializer(prefix, 'FP32', dims, Float32Array.from(values));
  }

  /** Int64 constant (shapes, axes, indices). */
  int64s(prefix: string, dims: readonly number[], values: readonly number[]): string {
    return this.initializer(prefix, 'INT64', dims, BigInt64Array.from(values.map((v) => BigInt(v))));
  }

  /** Adds a node; returns its output names (fresh names from `outputs` prefixes unless given as exact). */
  node(
    opType: string,
    inputs: readonly string[],
    outputs: readonly string[] | number = 1,
    attributes: Readonly<Record<string, AttributeValue>> = {},
  ): string[] {
    const outs =
      typeof outputs === 'number'
        ? Array.from({ length: outputs }, () => this.name(`${opType.toLowerCase()}_out`))
        : [...outputs];
    for (const o of outs) this.used.add(o);
    const attribute: OnnxTypes.IAttributeProto[] = Object.keys(attributes).map((key) => {
      const v = attributes[key]!;
      const T = onnx.AttributeProto.AttributeType;
      if ('int' in v) return { name: key, type: T.INT, i: v.int };
      if ('float' in v) return { name: key, type: T.FLOAT, f: v.float };
      if ('ints' in v) return { name: key, type: T.INTS, ints: [...v.ints] };
      if ('floats' in v) return { name: key, type: T.FLOATS, floats: [...v.floats] };
      if ('graph' in v) return { name: key, type: T.GRAPH, g: v.graph.toGraph(v.name) };
      return { name: key, type: T.STRING, s: new TextEncoder().encode(v.string) };
    });
    this.nodes.push({
      opType,
      input: [...inputs],
      output: outs,
      name: this.name(`${opType}_${this.nodes.length}`),
      attribute,
    });
    return outs;
  }

  /** One-output node shorthand. */
  op(opType: string, inputs: readonly string[], attributes: Readonly<Record<string, AttributeValue>> = {}): string {
    return this.node(opType, inputs, 1, attributes)[0]!;
  }

  /** The GraphProto (a model's main graph, or a subgraph attribute of a node). */
  toGraph(name: string): OnnxTypes.IGraphProto {
    return { name, node: this.nodes, input: this.inputs, output: this.outputs, initializer: this.initializers };
  }

  /** The ModelProto. */
  toModel(options: ModelOptions = {}): OnnxTypes.ModelProto {
    return onnx.ModelProto.create({
      irVersion: options.irVersion ?? 8,
      producerName: options.producerName ?? 'tritium-onnx-gen',
      producerVersion: '1',
      opsetImport: [{ domain: '', version: options.opset ?? 17 }],
      graph: this.toGraph(options.graphName ?? 'graph'),
    });
  }

  /** The encoded model bytes. */
  toBytes(options: ModelOptions = {}): Uint8Array {
    return onnx.ModelProto.encode(this.toModel(options)).finish();
  }
}
