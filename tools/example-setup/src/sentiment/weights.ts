import { Rng } from '@tritium/onnx-gen';
import type { BertParams, BertShape, Dense, LayerParams } from './bert-graph.ts';
import type { TokenFeatures } from './lexicon.ts';

/**
 * Hand-designed BERT weights that classify sentiment with real attention and FFN compute.
 *
 * The residual stream reserves 24 "signal" dimensions; the rest are spare dimensions that every
 * layer's random heads and FFN units (BERT's init, std `initStd`) write into, so the encoder
 * does a full BERT's work while the signal rides the residual connections untouched.
 *
 * - Every signal is stored as a mirrored pair (+s, -s), so it adds nothing to LayerNorm's mean,
 *   and is read back as (a - b) / 2, which cancels any mean the random writes introduce.
 * - Each embedding feature f comes with a companion √(1 - f²): every (token, position) pair then
 *   has the same norm, so the embedding LayerNorm is an exact, known scale r0 and layer 0 can
 *   read positions exactly. Two large anchor dimensions (token type 0) keep later LayerNorms
 *   close to that scale as attention/FFN outputs are added.
 *
 * Layer 0, head 0 — negation: token t attends to s with score c·neg(s) − α(t − s − D)², an exact
 * bilinear form of the position features (u, u²) and the negator flag, so it lands on a negator
 * 1..3 tokens back when there is one and otherwise on its non-negator neighbours; its value is
 * neg(s), giving n(t) ≈ 1 right after "not"/"never"/"n't", else ≈ 0.
 * Layer 0, FFN — four GELU units compute the signed valence v(t)·(1 − 2·[n(t) > ½]) (GELU's
 * identity gelu(z) − gelu(−z) = z passes v through; a steep pair gates the flip).
 * Layer 1, head 0 — zero query/key: uniform attention over the unmasked tokens, so [CLS] gets
 * the mean signed valence S of the sentence.
 * Pooler — tanh(γ·S) on [CLS]; classifier — logits [−k·p, +k·p] (index 1 = positive).
 */

/** Tunables of the design (defaults give the seed's example-sized logits, about ±2.5). */
export interface SentimentDesign {
  /** Stddev of the random (BERT-init) weights in spare dimensions. */
  readonly initStd: number;
  /** Anchor magnitude (token type 0 row). */
  readonly anchor: number;
  /** Negation head: negator bonus c, window sharpness α, window centre D (tokens back). */
  readonly negatorBonus: number;
  readonly windowSharpness: number;
  readonly windowCentre: number;
  /** Gate steepness K of the flip and GELU sharpening β. */
  readonly gateSteepness: number;
  readonly geluSharpness: number;
  /** Pooler gain γ and classifier gain k. */
  readonly poolerGain: number;
  readonly classifierGain: number;
  readonly seed: number;
}

export const DEFAULT_DESIGN: SentimentDesign = {
  initStd: 0.02,
  anchor: 6,
  negatorBonus: 5,
  windowSharpness: 1,
  windowCentre: 2,
  gateSteepness: 10,
  geluSharpness: 10,
  poolerGain: 25,
  classifierGain: 2.8,
  seed: 1234,
};

/** Signal dimensions (each a mirrored pair: index, index + 1). */
const D = {
  valence: 0,
  valenceCompanion: 2,
  negator: 4,
  negatorCompanion: 6,
  position: 8,
  positionCompanion: 10,
  positionSq: 12,
  positionSqCompanion: 14,
  anchor: 16,
  negated: 18,
  signedValence: 20,
  sentence: 22,
} as const;
/** First spare dimension. */
const SPARE = 24;

/** Sets a mirrored pair. */
function pair(row: Float32Array, dim: number, value: number): void {
  row[dim] = value;
  row[dim + 1] = -value;
}

/** Reads a signal pair of an r0-scaled stream as (a − b) / 2 / r0, into output `out` of a [in × outDim] weight. */
function readPair(w: Float32Array, outDim: number, out: number, dim: number, gain: number, r0: number): void {
  w[dim * outDim + out] += gain / (2 * r0);
  w[(dim + 1) * outDim + out] -= gain / (2 * r0);
}

const norm = (H: number) => ({ gamma: new Float32Array(H).fill(1), beta: new Float32Array(H) });
const zeros = (n: number) => new Float32Array(n);

/** The embedding tables, and r0: the scale LayerNorm gives the stream (every row's designed part has a fixed norm). */
function embeddingTables(shape: BertShape, features: TokenFeatures, design: SentimentDesign) {
  const { vocabSize: V, hidden: H, maxPosition: P } = shape;
  const wordEmbeddings = new Float32Array(V * H);
  for (let t = 0; t < V; t++) {
    const row = wordEmbeddings.subarray(t * H, (t + 1) * H);
    const v = features.valence[t]!;
    const n = features.negator[t]!;
    pair(row, D.valence, v);
    pair(row, D.valenceCompanion, Math.sqrt(1 - v * v));
    pair(row, D.negator, n);
    pair(row, D.negatorCompanion, 1 - n);
  }
  const positionEmbeddings = new Float32Array(P * H);
  for (let p = 0; p < P; p++) {
    const row = positionEmbeddings.subarray(p * H, (p + 1) * H);
    const u = p / P;
    pair(row, D.position, u);
    pair(row, D.positionCompanion, Math.sqrt(1 - u * u));
    pair(row, D.positionSq, u * u);
    pair(row, D.positionSqCompanion, Math.sqrt(1 - u ** 4));
  }
  const tokenType0 = new Float32Array(H);
  pair(tokenType0, D.anchor, design.anchor);
  // ‖x‖² = 4 features × 2 (pair) × 1 (feature² + companion²) + 2·anchor²; mean 0.
  const r0 = 1 / Math.sqrt((8 + 2 * design.anchor ** 2) / H);
  return { wordEmbeddings, positionEmbeddings, tokenType0, r0 };
}

/** A random dense (seeded by its label) whose outputs land only in spare dimensions when `spareOnly`. */
function randomDense(rng: Rng, std: number, label: string, inDim: number, outDim: number, spareOnly: boolean): Dense {
  const weight = rng.fork(label).normals(inDim * outDim, std);
  if (spareOnly) for (let i = 0; i < inDim; i++) weight.fill(0, i * outDim, i * outDim + SPARE);
  return { weight, bias: zeros(outDim) };
}

/** Every layer random; in the first two, head 0 and the first four FFN units cleared for the designed entries. */
function randomLayers(shape: BertShape, rng: Rng, std: number): LayerParams[] {
  const { hidden: H, intermediate: I } = shape;
  const dh = H / shape.heads;
  /** Zeroes head 0's columns (0..dh-1) of a Q/K/V projection so only designed entries remain. */
  const clearHead0 = (d: Dense) => {
    for (let i = 0; i < H; i++) d.weight.fill(0, i * H, i * H + dh);
    d.bias.fill(0, 0, dh);
  };
  const layers: LayerParams[] = [];
  for (let l = 0; l < shape.layers; l++) {
    const p = `layer${l}`;
    const query = randomDense(rng, std, `${p}.query`, H, H, false);
    const key = randomDense(rng, std, `${p}.key`, H, H, false);
    const value = randomDense(rng, std, `${p}.value`, H, H, false);
    const attentionOutput = randomDense(rng, std, `${p}.attention_output`, H, H, true);
    const ffnUp = randomDense(rng, std, `${p}.ffn_up`, H, I, false);
    const ffnDown = randomDense(rng, std, `${p}.ffn_down`, I, H, true);
    if (l < 2) {
      clearHead0(query);
      clearHead0(key);
      clearHead0(value);
      // Head 0's rows of the attention output projection.
      attentionOutput.weight.fill(0, 0, dh * H);
      // The first four FFN units are designed: clear their inputs and outputs.
      for (let i = 0; i < H; i++) ffnUp.weight.fill(0, i * I, i * I + 4);
      ffnDown.weight.fill(0, 0, 4 * H);
    }
    layers.push({ query, key, value, attentionOutput, attentionNorm: norm(H), ffnUp, ffnDown, ffnNorm: norm(H) });
  }
  return layers;
}

/** Layer 0, head 0: score(t, s)·√dh⁻¹ = c·neg(s) − α(t − s − D)², with u = position / P. */
function designNegationHead(layer: LayerParams, shape: BertShape, design: SentimentDesign, r0: number): void {
  const { hidden: H, maxPosition: P } = shape;
  const { query, key, value, attentionOutput } = layer;
  const read = (w: Float32Array, out: number, dim: number, gain: number) => readPair(w, H, out, dim, gain, r0);
  const s = Math.sqrt(H / shape.heads); // cancels the graph's 1/√dh
  const a = design.windowSharpness * P * P;
  const delta = design.windowCentre / P;
  read(query.weight, 0, D.position, s); // q0 = u_t
  read(query.weight, 1, D.positionSq, s); // q1 = u_t²
  query.bias[2] = s; // q2 = 1
  query.bias[3] = s; // q3 = 1
  read(key.weight, 0, D.position, 2 * a); // k0 = 2a(u_s + δ)
  key.bias[0] = 2 * a * delta;
  key.bias[1] = -a; // k1 = −a
  read(key.weight, 2, D.positionSq, -a); // k2 = −a(u_s + δ)²
  read(key.weight, 2, D.position, -2 * a * delta);
  key.bias[2] = -a * delta * delta;
  read(key.weight, 3, D.negator, design.negatorBonus); // k3 = c·neg(s)
  read(value.weight, 0, D.negator, 1); // v0 = neg(s)
  pair(attentionOutput.weight.subarray(0, H), D.negated, r0); // → n(t), at the stream's scale
}

/** Layer 0, FFN: signed valence = v − 2·gate(v, n), gate = relu(v + K(n−½)) − relu(−v + K(n−½)). */
function designValenceGate(layer: LayerParams, shape: BertShape, design: SentimentDesign, r0: number): void {
  const { hidden: H, intermediate: I } = shape;
  const { ffnUp, ffnDown } = layer;
  const read = (w: Float32Array, out: number, dim: number, gain: number) => readPair(w, I, out, dim, gain, r0);
  const b = design.geluSharpness;
  const K = design.gateSteepness;
  read(ffnUp.weight, 0, D.valence, b);
  read(ffnUp.weight, 0, D.negated, b * K);
  ffnUp.bias[0] = (-b * K) / 2;
  read(ffnUp.weight, 1, D.valence, -b);
  read(ffnUp.weight, 1, D.negated, b * K);
  ffnUp.bias[1] = (-b * K) / 2;
  read(ffnUp.weight, 2, D.valence, b);
  read(ffnUp.weight, 3, D.valence, -b);
  const gains = [-2 / b, 2 / b, 1 / b, -1 / b];
  gains.forEach((gain, unit) => pair(ffnDown.weight.subarray(unit * H, (unit + 1) * H), D.signedValence, gain * r0));
}

/**
 * Builds all parameters for `shape` from per-token features. Deterministic: the same inputs
 * give the same weights (seeded RNG).
 */
export function designSentimentParams(shape: BertShape, features: TokenFeatures, design: SentimentDesign = DEFAULT_DESIGN): BertParams {
  const { vocabSize: V, hidden: H, numLabels } = shape;
  if (H < SPARE + 8) throw new Error(`hidden must be at least ${SPARE + 8} for the sentiment design`);
  if (numLabels !== 2) throw new Error('the sentiment design has 2 labels (negative, positive)');
  if (features.valence.length !== V) throw new Error(`features cover ${features.valence.length} tokens, vocab has ${V}`);
  const rng = new Rng(design.seed);
  const { wordEmbeddings, positionEmbeddings, tokenType0, r0 } = embeddingTables(shape, features, design);
  const layers = randomLayers(shape, rng, design.initStd);
  designNegationHead(layers[0]!, shape, design, r0);
  designValenceGate(layers[0]!, shape, design, r0);
  // Layer 1, head 0: query/key stay zero (uniform attention over unmasked tokens); value = signed valence.
  {
    const { value, attentionOutput } = layers[1]!;
    readPair(value.weight, H, 0, D.signedValence, 1, r0);
    pair(attentionOutput.weight.subarray(0, H), D.sentence, r0);
  }
  // Pooler unit 0 = tanh(γ·S); classifier = [−k, +k]·unit 0. The other pooler units are random.
  const pooler = randomDense(rng, design.initStd, 'pooler', H, H, false);
  for (let i = 0; i < H; i++) pooler.weight[i * H] = 0;
  readPair(pooler.weight, H, 0, D.sentence, design.poolerGain, r0);
  const classifier: Dense = { weight: zeros(H * 2), bias: zeros(2) };
  classifier.weight[0] = -design.classifierGain;
  classifier.weight[1] = design.classifierGain;
  return { wordEmbeddings, positionEmbeddings, tokenType0, embeddingNorm: norm(H), layers, pooler, classifier };
}
