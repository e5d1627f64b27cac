import { buildBertModel, type BertOptions } from '@tritium/onnx-gen';

/** The embedding encoder's size: the classifier's (EXAMPLE_SHAPE), so both pipelines cost alike. */
export const EMBEDDING_SHAPE = {
  hidden: 256,
  layers: 4,
  heads: 4,
  intermediate: 1024,
  maxPosition: 512,
  seed: 31,
} as const satisfies Omit<BertOptions, 'vocabSize'>;

/**
 * Builds `embedding_encoder` (INPUT_IDS, ATTENTION_MASK → TOKEN_EMBEDDINGS [batch, tokens, 256]):
 * a BERT-shaped encoder with seeded weights over the tokenizer's vocabulary, without pooling
 * (mean_pooling/1/model.ts pools and normalizes).
 */
export function buildEmbeddingEncoder(vocab: readonly string[], shape: Omit<BertOptions, 'vocabSize'> = EMBEDDING_SHAPE): Uint8Array {
  return buildBertModel({
    ...shape,
    vocabSize: vocab.length,
    pooling: 'none',
    names: { inputIds: 'INPUT_IDS', attentionMask: 'ATTENTION_MASK', tokenEmbeddings: 'TOKEN_EMBEDDINGS' },
  });
}
