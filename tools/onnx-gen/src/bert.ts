/**
 * A BERT-shaped encoder with seeded weights: word + position (+ token-type) embeddings and
 * LayerNorm, `layers` × (multi-head self-attention with the additive attention mask, residual,
 * LayerNorm, Erf-GELU feed-forward, residual, LayerNorm), [CLS] pooling (dense + tanh) or masked
 * mean pooling, then a classifier head → logits [batch, numLabels]. Opset 17 (LayerNormalization).
 *
 * Weights are random (std `initStd`) unless overridden: `overrides` let a caller shape the answer
 * deterministically (edit word-embedding rows, set the classifier, or add a per-token score path
 * so the logits carry e.g. a sentiment lexicon's polarity) while the encoder still does the real
 * attention/FFN compute.
 *
 * With `pooling: 'none'` the model stops after the last layer and outputs the token embeddings
 * `[batch, sequence, hidden]` (an embedding encoder: pooling is left to the next step).
 */
import { GraphBuilder } from './graph-builder.ts';
import { Rng } from './rng.ts';

export interface BertNames {
  /** Default `input_ids`. */
  readonly inputIds?: string;
  /** Default `attention_mask`. */
  readonly attentionMask?: string;
  /** When set, the model takes this third INT64 [batch, seq] input; otherwise token type 0 is used. */
  readonly tokenTypeIds?: string;
  /** Default `logits`. */
  readonly logits?: string;
  /** With `pooling: 'none'`: the token embeddings output, default `last_hidden_state`. */
  readonly tokenEmbeddings?: string;
}

export interface BertOverrides {
  /** Called for every vocabulary row after random init; may edit `row` (length `hidden`) in place. */
  readonly wordEmbedding?: (tokenId: number, row: Float32Array) => void;
  /** Classifier head: `weight` is [hidden × numLabels] row-major, `bias` [numLabels] (default zeros). */
  readonly classifier?: { readonly weight: ArrayLike<number>; readonly bias?: ArrayLike<number> };
  /**
   * A per-token score path added to the logits: logits += maskedMean(scores[input_ids]) · weights.
   * `scores` has `vocabSize` entries, `weights` `numLabels` (e.g. [-s, +s] for negative/positive).
   */
  readonly tokenScores?: { readonly scores: ArrayLike<number>; readonly weights: ArrayLike<number> };
}

export interface BertOptions {
  readonly vocabSize: number;
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  /** Feed-forward width (default 4 × hidden). */
  readonly intermediate?: number;
  /** Position table rows: the longest sequence the model accepts (default 512). */
  readonly maxPosition?: number;
  /** Default 2. */
  readonly numLabels?: number;
  /** Token-type table rows (default 2). */
  readonly typeVocabSize?: number;
  /** Default 42. */
  readonly seed?: number;
  /** Std of the random weights (default 0.02, as BERT's initializer). */
  readonly initStd?: number;
  /**
   * `cls` (default): pooler dense + tanh over position 0; `mean`: mean over unmasked positions;
   * `none`: no pooling and no classifier, the token embeddings are the output.
   */
  readonly pooling?: 'cls' | 'mean' | 'none';
  readonly names?: BertNames;
  readonly overrides?: BertOverrides;
}

/** Builds the encoder; returns the encoded ONNX model. */
export function buildBertModel(options: BertOptions): Uint8Array {
  const { vocabSize: V, hidden: H, layers, heads } = options;
  if (!Number.isInteger(H / heads)) throw new Error(`hidden (${H}) must be a multiple of heads (${heads})`);
  const I = options.intermediate ?? 4 * H;
  const P = options.maxPosition ?? 512;
  const L = options.numLabels ?? 2;
  const T = options.typeVocabSize ?? 2;
  const std = options.initStd ?? 0.02;
  const dh = H / heads;
  const rng = new Rng(options.seed ?? 42);
  const names = options.names ?? {};
  const idsName = names.inputIds ?? 'input_ids';
  const maskName = names.attentionMask ?? 'attention_mask';
  const logitsName = names.logits ?? 'logits';
  const overrides = options.overrides ?? {};

  const g = new GraphBuilder();
  const dims = ['batch', 'sequence'];
  const ids = g.input(idsName, 'INT64', dims);
  const mask = g.input(maskName, 'INT64', dims);
  const typeIds = names.tokenTypeIds ? g.input(names.tokenTypeIds, 'INT64', dims) : undefined;
  const pooling = options.pooling ?? 'cls';
  const tokenEmbeddingsName = names.tokenEmbeddings ?? 'last_hidden_state';
  if (pooling === 'none') g.output(tokenEmbeddingsName, 'FP32', ['batch', 'sequence', H]);
  else g.output(logitsName, 'FP32', ['batch', L]);

  const weight = (label: string, shape: number[]) => g.floats(label, shape, rng.fork(label).normals(shape.reduce((a, b) => a * b, 1), std));
  const zeros = (label: string, n: number) => g.floats(label, [n], new Float32Array(n));
  const ones = (label: string, n: number) => g.floats(label, [n], new Float32Array(n).fill(1));
  const layerNorm = (x: string, label: string) =>
    g.op('LayerNormalization', [x, ones(`${label}.gamma`, H), zeros(`${label}.beta`, H)], {
      axis: { int: -1 },
      epsilon: { float: 1e-12 },
    });
  const dense = (x: string, label: string, inDim: number, outDim: number) =>
    g.op('Add', [g.op('MatMul', [x, weight(`${label}.weight`, [inDim, outDim])]), zeros(`${label}.bias`, outDim)]);

  // Embeddings.
  const wordTable = rng.fork('embeddings.word').normals(V * H, std);
  if (overrides.wordEmbedding) {
    for (let t = 0; t < V; t++) overrides.wordEmbedding(t, wordTable.subarray(t * H, (t + 1) * H));
  }
  const wordEmb = g.floats('embeddings.word', [V, H], wordTable);
  let x = g.op('Gather', [wordEmb, ids], { axis: { int: 0 } });
  const idsShape = g.op('Shape', [ids]);
  const seqLen = g.op('Gather', [idsShape, g.int64s('one_index', [], [1])], { axis: { int: 0 } });
  const positions = g.op('Range', [g.int64s('zero', [], [0]), seqLen, g.int64s('one', [], [1])]);
  x = g.op('Add', [x, g.op('Gather', [weight('embeddings.position', [P, H]), positions], { axis: { int: 0 } })]);
  const typeTable = weight('embeddings.token_type', [T, H]);
  if (typeIds) {
    x = g.op('Add', [x, g.op('Gather', [typeTable, typeIds], { axis: { int: 0 } })]);
  } else {
    const row0 = g.op('Gather', [typeTable, g.int64s('zero_index', [], [0])], { axis: { int: 0 } });
    x = g.op('Add', [x, row0]);
  }
  x = layerNorm(x, 'embeddings.norm');

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

  for (let l = 0; l < layers; l++) {
    const p = `layer${l}`;
    const split = (t: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [t, headShape])], { perm: { ints: perm } });
    const q = split(dense(x, `${p}.attention.query`, H, H), [0, 2, 1, 3]); // [B, h, S, dh]
    const k = split(dense(x, `${p}.attention.key`, H, H), [0, 2, 3, 1]); // [B, h, dh, S]
    const v = split(dense(x, `${p}.attention.value`, H, H), [0, 2, 1, 3]); // [B, h, S, dh]
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), scale]), additive]);
    const probs = g.op('Softmax', [scores], { axis: { int: -1 } });
    const context = g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } });
    const attended = dense(g.op('Reshape', [context, mergedShape]), `${p}.attention.output`, H, H);
    x = layerNorm(g.op('Add', [x, attended]), `${p}.attention.norm`);
    const up = dense(x, `${p}.ffn.up`, H, I);
    const gelu = g.op('Mul', [g.op('Mul', [up, half]), g.op('Add', [oneF, g.op('Erf', [g.op('Div', [up, sqrt2])])])]);
    x = layerNorm(g.op('Add', [x, dense(gelu, `${p}.ffn.down`, I, H)]), `${p}.ffn.norm`);
  }

  if (pooling === 'none') {
    g.node('Identity', [x], [tokenEmbeddingsName]);
    return g.toBytes({ graphName: 'bert' });
  }

  // Masked mean helper: Σ(values · mask) / max(Σ mask, 1) over the sequence axis.
  const maskCount = g.op('Max', [g.op('ReduceSum', [maskF, g.int64s('axis_1', [1], [1])], { keepdims: { int: 1 } }), oneF]); // [B, 1]

  let pooled: string;
  if (pooling === 'cls') {
    const first = g.op('Gather', [x, g.int64s('cls_index', [], [0])], { axis: { int: 1 } }); // [B, H]
    pooled = g.op('Tanh', [dense(first, 'pooler', H, H)]);
  } else {
    const weighted = g.op('Mul', [x, g.op('Unsqueeze', [maskF, g.int64s('axis_2', [1], [2])])]);
    pooled = g.op('Div', [g.op('ReduceSum', [weighted, g.int64s('axis_1b', [1], [1])], { keepdims: { int: 0 } }), maskCount]);
  }

  let logits: string;
  if (overrides.classifier) {
    const w = g.floats('classifier.weight', [H, L], checkLength(overrides.classifier.weight, H * L, 'classifier.weight'));
    const b = g.floats('classifier.bias', [L], overrides.classifier.bias ? checkLength(overrides.classifier.bias, L, 'classifier.bias') : new Float32Array(L));
    logits = g.op('Add', [g.op('MatMul', [pooled, w]), b]);
  } else {
    logits = dense(pooled, 'classifier', H, L);
  }

  if (overrides.tokenScores) {
    const table = g.floats('token_scores', [V], checkLength(overrides.tokenScores.scores, V, 'tokenScores.scores'));
    const perToken = g.op('Mul', [g.op('Gather', [table, ids], { axis: { int: 0 } }), maskF]); // [B, S]
    const meanScore = g.op('Div', [g.op('ReduceSum', [perToken, g.int64s('axis_1c', [1], [1])], { keepdims: { int: 1 } }), maskCount]); // [B, 1]
    const w = g.floats('token_scores.weights', [1, L], checkLength(overrides.tokenScores.weights, L, 'tokenScores.weights'));
    logits = g.op('Add', [logits, g.op('MatMul', [meanScore, w])]);
  }
  g.node('Identity', [logits], [logitsName]);
  return g.toBytes({ graphName: 'bert' });
}

function checkLength(values: ArrayLike<number>, expected: number, what: string): ArrayLike<number> {
  if (values.length !== expected) throw new Error(`${what} has ${values.length} values, expected ${expected}`);
  return values;
}
