import { GraphBuilder } from '@tritium/onnx-gen';

/**
 * A BERT encoder graph with caller-supplied weights, built with `@tritium/onnx-gen`'s
 * GraphBuilder. It is the same graph as onnx-gen's `buildBertModel` (Gather embeddings + learned
 * positions + token type 0, LayerNormalization ε=1e-12, multi-head attention with the additive
 * -1e4 mask, Erf-GELU FFN, post-LN residuals, [CLS] pooler dense + tanh, classifier), but every
 * parameter comes from {@link BertParams}: `buildBertModel`'s overrides reach only word
 * embeddings and the head, and the sentiment design needs position embeddings and per-layer
 * attention/FFN weights too.
 */

/** Encoder shape. */
export interface BertShape {
  readonly vocabSize: number;
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly intermediate: number;
  readonly maxPosition: number;
  readonly numLabels: number;
}

/** Dense layer weights: `weight` is [in × out] row-major (MatMul's right operand), `bias` [out]. */
export interface Dense {
  readonly weight: Float32Array;
  readonly bias: Float32Array;
}

export interface LayerParams {
  readonly query: Dense;
  readonly key: Dense;
  readonly value: Dense;
  readonly attentionOutput: Dense;
  readonly attentionNorm: { gamma: Float32Array; beta: Float32Array };
  readonly ffnUp: Dense;
  readonly ffnDown: Dense;
  readonly ffnNorm: { gamma: Float32Array; beta: Float32Array };
}

/** Every parameter of the encoder. */
export interface BertParams {
  /** [vocabSize × hidden] */
  readonly wordEmbeddings: Float32Array;
  /** [maxPosition × hidden] */
  readonly positionEmbeddings: Float32Array;
  /** [hidden]: token type 0's row (the model takes no token_type_ids). */
  readonly tokenType0: Float32Array;
  readonly embeddingNorm: { gamma: Float32Array; beta: Float32Array };
  readonly layers: readonly LayerParams[];
  readonly pooler: Dense;
  readonly classifier: Dense;
}

/** Tensor names of the graph's interface (the seed's bert_classifier uses upper case). */
export interface BertIo {
  readonly inputIds: string;
  readonly attentionMask: string;
  readonly logits: string;
}

/** Encodes the model (opset 17) to ONNX bytes. */
export function buildBertGraph(shape: BertShape, params: BertParams, io: BertIo): Uint8Array {
  const { hidden: H, heads, intermediate: I, numLabels: L } = shape;
  const dh = H / heads;
  if (!Number.isInteger(dh)) throw new Error(`hidden (${H}) must be a multiple of heads (${heads})`);
  const g = new GraphBuilder();
  const ids = g.input(io.inputIds, 'INT64', ['batch', 'sequence']);
  const mask = g.input(io.attentionMask, 'INT64', ['batch', 'sequence']);
  g.output(io.logits, 'FP32', ['batch', L]);

  const layerNorm = (x: string, label: string, p: { gamma: Float32Array; beta: Float32Array }) =>
    g.op('LayerNormalization', [x, g.floats(`${label}.gamma`, [H], p.gamma), g.floats(`${label}.beta`, [H], p.beta)], {
      axis: { int: -1 },
      epsilon: { float: 1e-12 },
    });
  const dense = (x: string, label: string, d: Dense, inDim: number, outDim: number) =>
    g.op('Add', [g.op('MatMul', [x, g.floats(`${label}.weight`, [inDim, outDim], d.weight)]), g.floats(`${label}.bias`, [outDim], d.bias)]);

  // Embeddings: word rows + position rows 0..seq-1 + token type 0, then LayerNorm.
  let x = g.op('Gather', [g.floats('embeddings.word', [shape.vocabSize, H], params.wordEmbeddings), ids], { axis: { int: 0 } });
  const seqLen = g.op('Gather', [g.op('Shape', [ids]), g.int64s('one_index', [], [1])], { axis: { int: 0 } });
  const positions = g.op('Range', [g.int64s('zero', [], [0]), seqLen, g.int64s('one', [], [1])]);
  const positionTable = g.floats('embeddings.position', [shape.maxPosition, H], params.positionEmbeddings);
  x = g.op('Add', [x, g.op('Gather', [positionTable, positions], { axis: { int: 0 } })]);
  x = g.op('Add', [x, g.floats('embeddings.token_type0', [H], params.tokenType0)]);
  x = layerNorm(x, 'embeddings.norm', params.embeddingNorm);

  // Additive mask [batch, 1, 1, seq]: 0 where attended, -1e4 where padded.
  const maskF = g.op('Cast', [mask], { to: { int: 1 } });
  const inverted = g.op('Sub', [g.floats('one_f', [], [1]), maskF]);
  const additive = g.op('Unsqueeze', [g.op('Mul', [inverted, g.floats('neg_big', [], [-10000])]), g.int64s('axes_1_2', [2], [1, 2])]);
  const headShape = g.int64s('head_shape', [4], [0, 0, heads, dh]);
  const mergedShape = g.int64s('merged_shape', [3], [0, 0, H]);
  const scale = g.floats('attention_scale', [], [1 / Math.sqrt(dh)]);
  const sqrt2 = g.floats('sqrt2', [], [Math.SQRT2]);
  const half = g.floats('half', [], [0.5]);
  const oneF = g.floats('one_gelu', [], [1]);

  params.layers.forEach((lp, l) => {
    const p = `layer${l}`;
    const split = (t: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [t, headShape])], { perm: { ints: perm } });
    const q = split(dense(x, `${p}.attention.query`, lp.query, H, H), [0, 2, 1, 3]); // [B, h, S, dh]
    const k = split(dense(x, `${p}.attention.key`, lp.key, H, H), [0, 2, 3, 1]); // [B, h, dh, S]
    const v = split(dense(x, `${p}.attention.value`, lp.value, H, H), [0, 2, 1, 3]); // [B, h, S, dh]
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), scale]), additive]);
    const probs = g.op('Softmax', [scores], { axis: { int: -1 } });
    const context = g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } });
    const attended = dense(g.op('Reshape', [context, mergedShape]), `${p}.attention.output`, lp.attentionOutput, H, H);
    x = layerNorm(g.op('Add', [x, attended]), `${p}.attention.norm`, lp.attentionNorm);
    const up = dense(x, `${p}.ffn.up`, lp.ffnUp, H, I);
    const gelu = g.op('Mul', [g.op('Mul', [up, half]), g.op('Add', [oneF, g.op('Erf', [g.op('Div', [up, sqrt2])])])]);
    x = layerNorm(g.op('Add', [x, dense(gelu, `${p}.ffn.down`, lp.ffnDown, I, H)]), `${p}.ffn.norm`, lp.ffnNorm);
  });

  const first = g.op('Gather', [x, g.int64s('cls_index', [], [0])], { axis: { int: 1 } }); // [B, H]
  const pooled = g.op('Tanh', [dense(first, 'pooler', params.pooler, H, H)]);
  const logits = dense(pooled, 'classifier', params.classifier, H, L);
  g.node('Identity', [logits], [io.logits]);
  return g.toBytes({ graphName: 'bert_sentiment' });
}
