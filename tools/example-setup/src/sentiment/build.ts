import { buildBertGraph, type BertShape } from './bert-graph.ts';
import { tokenFeatures } from './lexicon.ts';
import { DEFAULT_DESIGN, designSentimentParams, type SentimentDesign } from './weights.ts';

/**
 * The example's classifier size. Big enough that the encoder, not the server or the tokenizer,
 * is the dominant cost of a request (what the benchmarks need), small enough to generate in a
 * second or two and answer a short sentence in about a millisecond on a 2-core machine.
 */
export const EXAMPLE_SHAPE: Omit<BertShape, 'vocabSize'> = {
  hidden: 256,
  layers: 4,
  heads: 4,
  intermediate: 1024,
  maxPosition: 512,
  numLabels: 2,
};

/** Builds the seed's `bert_classifier` (INPUT_IDS, ATTENTION_MASK → LOGITS) for a vocabulary. */
export function buildSentimentClassifier(
  vocab: readonly string[],
  shape: Omit<BertShape, 'vocabSize'> = EXAMPLE_SHAPE,
  design: SentimentDesign = DEFAULT_DESIGN,
): Uint8Array {
  const full: BertShape = { ...shape, vocabSize: vocab.length };
  const params = designSentimentParams(full, tokenFeatures(vocab), design);
  return buildBertGraph(full, params, { inputIds: 'INPUT_IDS', attentionMask: 'ATTENTION_MASK', logits: 'LOGITS' });
}
