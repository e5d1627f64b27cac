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

/** The graph being built with its seeded weights, and the blocks every part uses. */
interface Parts {
  readonly g: GraphBuilder;
  readonly rng: Rng;
  readonly H: number;
  /** A weight of `shape`, random with the options' std from its own fork of the seed. */
  weight(label: string, shape: number[]): string;
  layerNorm(x: string, label: string): string;
  dense(x: string, label: string, inDim: number, outDim: number): string;
}

function parts(g: GraphBuilder, rng: Rng, H: number, std: number): Parts {
  const weight = (label: string, shape: number[]) => g.floats(label, shape, rng.fork(label).normals(shape.reduce((a, b) => a * b, 1), std));
  const zeros = (label: string, n: number) => g.floats(label, [n], new Float32Array(n));
  const ones = (label: string, n: number) => g.floats(label, [n], new Float32Array(n).fill(1));
  return {
    g,
    rng,
    H,
    weight,
    layerNorm: (x, label) =>
      g.op('LayerNormalization', [x, ones(`${label}.gamma`, H), zeros(`${label}.beta`, H)], {
        axis: { int: -1 },
        epsilon: { float: 1e-12 },
      }),
    dense: (x, label, inDim, outDim) => g.op('Add', [g.op('MatMul', [x, weight(`${label}.weight`, [inDim, outDim])]), zeros(`${label}.bias`, outDim)]),
  };
}

/** Word + position (+ token-type) embeddings, then LayerNorm: [batch, sequence, hidden]. */
function embeddings(p: Parts, ids: string, typeIds: string | undefined, sizes: { V: number; P: number; T: number; std: number }, overrides: BertOverrides): string {
  const { g, H } = p;
  const wordTable = p.rng.fork('embeddings.word').normals(sizes.V * H, sizes.std);
  if (overrides.wordEmbedding) {
    for (let t = 0; t < sizes.V; t++) overrides.wordEmbedding(t, wordTable.subarray(t * H, (t + 1) * H));
  }
  const wordEmb = g.floats('embeddings.word', [sizes.V, H], wordTable);
  let x = g.op('Gather', [wordEmb, ids], { axis: { int: 0 } });
  const idsShape = g.op('Shape', [ids]);
  const seqLen = g.op('Gather', [idsShape, g.int64s('one_index', [], [1])], { axis: { int: 0 } });
  const positions = g.op('Range', [g.int64s('zero', [], [0]), seqLen, g.int64s('one', [], [1])]);
  x = g.op('Add', [x, g.op('Gather', [p.weight('embeddings.position', [sizes.P, H]), positions], { axis: { int: 0 } })]);
  const typeTable = p.weight('embeddings.token_type', [sizes.T, H]);
  if (typeIds) {
    x = g.op('Add', [x, g.op('Gather', [typeTable, typeIds], { axis: { int: 0 } })]);
  } else {
    const row0 = g.op('Gather', [typeTable, g.int64s('zero_index', [], [0])], { axis: { int: 0 } });
    x = g.op('Add', [x, row0]);
  }
  return p.layerNorm(x, 'embeddings.norm');
}

/** The constants every layer shares, and the additive mask [batch, 1, 1, seq]: 0 where attended, -1e4 where padded. */
function layerConstants(g: GraphBuilder, maskF: string, H: number, heads: number) {
  const dh = H / heads;
  const inverted = g.op('Sub', [g.floats('one_f', [], [1]), maskF]);
  const additive = g.op('Unsqueeze', [g.op('Mul', [inverted, g.floats('neg_big', [], [-10000])]), g.int64s('axes_1_2', [2], [1, 2])]);
  return {
    additive,
    headShape: g.int64s('head_shape', [4], [0, 0, heads, dh]),
    mergedShape: g.int64s('merged_shape', [3], [0, 0, H]),
    scale: g.floats('attention_scale', [], [1 / Math.sqrt(dh)]),
    sqrt2: g.floats('sqrt2', [], [Math.SQRT2]),
    half: g.floats('half', [], [0.5]),
    oneF: g.floats('one_gelu', [], [1]),
  };
}

type LayerConstants = ReturnType<typeof layerConstants>;

/** `layers` × (self-attention with the additive mask, residual, LayerNorm, Erf-GELU feed-forward, residual, LayerNorm). */
function encoderLayers(p: Parts, x: string, c: LayerConstants, shape: { layers: number; I: number }): string {
  const { g, H } = p;
  const { additive, headShape, mergedShape, scale, sqrt2, half, oneF } = c;
  for (let l = 0; l < shape.layers; l++) {
    const n = `layer${l}`;
    const split = (t: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [t, headShape])], { perm: { ints: perm } });
    const q = split(p.dense(x, `${n}.attention.query`, H, H), [0, 2, 1, 3]); // [B, h, S, dh]
    const k = split(p.dense(x, `${n}.attention.key`, H, H), [0, 2, 3, 1]); // [B, h, dh, S]
    const v = split(p.dense(x, `${n}.attention.value`, H, H), [0, 2, 1, 3]); // [B, h, S, dh]
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), scale]), additive]);
    const probs = g.op('Softmax', [scores], { axis: { int: -1 } });
    const context = g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } });
    const attended = p.dense(g.op('Reshape', [context, mergedShape]), `${n}.attention.output`, H, H);
    x = p.layerNorm(g.op('Add', [x, attended]), `${n}.attention.norm`);
    const up = p.dense(x, `${n}.ffn.up`, H, shape.I);
    const gelu = g.op('Mul', [g.op('Mul', [up, half]), g.op('Add', [oneF, g.op('Erf', [g.op('Div', [up, sqrt2])])])]);
    x = p.layerNorm(g.op('Add', [x, p.dense(gelu, `${n}.ffn.down`, shape.I, H)]), `${n}.ffn.norm`);
  }
  return x;
}

/** [CLS] pooling (dense + tanh) or masked mean pooling, the classifier, and the token-score path: logits [batch, L]. */
function poolAndClassify(p: Parts, x: string, ids: string, maskF: string, oneF: string, head: { pooling: 'cls' | 'mean'; V: number; L: number }, overrides: BertOverrides): string {
  const { g, H } = p;
  const { V, L } = head;
  // Masked mean helper: Σ(values · mask) / max(Σ mask, 1) over the sequence axis.
  const maskCount = g.op('Max', [g.op('ReduceSum', [maskF, g.int64s('axis_1', [1], [1])], { keepdims: { int: 1 } }), oneF]); // [B, 1]

  let pooled: string;
  if (head.pooling === 'cls') {
    const first = g.op('Gather', [x, g.int64s('cls_index', [], [0])], { axis: { int: 1 } }); // [B, H]
    pooled = g.op('Tanh', [p.dense(first, 'pooler', H, H)]);
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
    logits = p.dense(pooled, 'classifier', H, L);
  }

  if (overrides.tokenScores) {
    const table = g.floats('token_scores', [V], checkLength(overrides.tokenScores.scores, V, 'tokenScores.scores'));
    const perToken = g.op('Mul', [g.op('Gather', [table, ids], { axis: { int: 0 } }), maskF]); // [B, S]
    const meanScore = g.op('Div', [g.op('ReduceSum', [perToken, g.int64s('axis_1c', [1], [1])], { keepdims: { int: 1 } }), maskCount]); // [B, 1]
    const w = g.floats('token_scores.weights', [1, L], checkLength(overrides.tokenScores.weights, L, 'tokenScores.weights'));
    logits = g.op('Add', [logits, g.op('MatMul', [meanScore, w])]);
  }
  return logits;
}

/** Builds the encoder; returns the encoded ONNX model. */
export function buildBertModel(options: BertOptions): Uint8Array {
  const { vocabSize: V, hidden: H, layers, heads } = options;
  if (!Number.isInteger(H / heads)) throw new Error(`hidden (${H}) must be a multiple of heads (${heads})`);
  const std = options.initStd ?? 0.02;
  const names = options.names ?? {};
  const logitsName = names.logits ?? 'logits';
  const overrides = options.overrides ?? {};

  const g = new GraphBuilder();
  const dims = ['batch', 'sequence'];
  const ids = g.input(names.inputIds ?? 'input_ids', 'INT64', dims);
  const mask = g.input(names.attentionMask ?? 'attention_mask', 'INT64', dims);
  const typeIds = names.tokenTypeIds ? g.input(names.tokenTypeIds, 'INT64', dims) : undefined;
  const pooling = options.pooling ?? 'cls';
  const tokenEmbeddingsName = names.tokenEmbeddings ?? 'last_hidden_state';
  if (pooling === 'none') g.output(tokenEmbeddingsName, 'FP32', ['batch', 'sequence', H]);
  else g.output(logitsName, 'FP32', ['batch', options.numLabels ?? 2]);

  const p = parts(g, new Rng(options.seed ?? 42), H, std);
  let x = embeddings(p, ids, typeIds, { V, P: options.maxPosition ?? 512, T: options.typeVocabSize ?? 2, std }, overrides);
  const maskF = g.op('Cast', [mask], { to: { int: 1 } });
  const constants = layerConstants(g, maskF, H, heads);
  x = encoderLayers(p, x, constants, { layers, I: options.intermediate ?? 4 * H });
  if (pooling === 'none') {
    g.node('Identity', [x], [tokenEmbeddingsName]);
    return g.toBytes({ graphName: 'bert' });
  }
  const logits = poolAndClassify(p, x, ids, maskF, constants.oneF, { pooling, V, L: options.numLabels ?? 2 }, overrides);
  g.node('Identity', [logits], [logitsName]);
  return g.toBytes({ graphName: 'bert' });
}

function checkLength(values: ArrayLike<number>, expected: number, what: string): ArrayLike<number> {
  if (values.length !== expected) throw new Error(`${what} has ${values.length} values, expected ${expected}`);
  return values;
}
