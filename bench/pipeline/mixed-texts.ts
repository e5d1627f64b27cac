/**
 * The mixed-length workload: review-like texts whose token counts (with [CLS] and [SEP], as the
 * example's tokenizer counts them) follow a long-tailed distribution from 4 to 256, mean about 24.
 * Deterministic: the same seed and tokenizer files give the same texts in the same order, so every
 * configuration of a run (and every run) sends the same requests.
 *
 * Lengths: log-normal (median 16, σ 0.9), clipped to [4, 256]: most texts are a sentence or two,
 * one in ~40 is a paragraph of 100 tokens or more, a few are 256. Texts: clauses of product and
 * service reviews drawn at random and joined as sentences, then cut word by word to the drawn length.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The seed every benchmark uses (change it and every figure changes with it). */
export const MIXED_SEED = 29;
export const MIN_TOKENS = 4;
export const MAX_TOKENS = 256;
const MEDIAN_TOKENS = 16;
const SIGMA = 0.9;

const OPENINGS = [
  'I bought this for my daughter', 'We have used it every day for a month', 'Ordered on a Monday', 'After two weeks of use',
  'My second one of these', 'Picked it up on sale', 'Gift for my husband', 'Honestly', 'Long review, sorry',
  'Update after three months', 'First impressions', 'Short version', 'We stayed for four nights',
];
const CLAUSES = [
  'the battery lasts all day', 'the screen is far too dim outside', 'shipping took almost two weeks',
  'customer support answered within an hour', 'the instructions were confusing', 'it feels cheap and the buttons rattle',
  'setup took five minutes', 'the app crashes every time I open the settings', 'sound quality is excellent for the price',
  'the staff were friendly and helpful', 'the room smelled of smoke', 'breakfast was cold and overpriced',
  'it stopped working after the latest update', 'the fabric is soft and the stitching is solid', 'sizes run small so order one up',
  'delivery was fast', 'the packaging was damaged but the product was fine', 'it does exactly what it says',
  'I would not recommend it to anyone', 'this is the best purchase I made all year', 'the lid does not close properly',
  'the coffee tastes burnt no matter the setting', 'the kids love it', 'the manual is missing half the steps',
  'the noise is unbearable at night', 'it charges quickly and holds the charge', 'the colors look nothing like the pictures',
  'the refund took a month and three emails', 'the plot was boring and the ending made no sense', 'the acting was superb',
  'the food arrived late and the fries were soggy', 'the waiter forgot our drinks twice', 'the view from the balcony was stunning',
  'the price went up the week after I bought it', 'the handle broke on the second day', 'it is lighter than I expected',
  'the zipper jams constantly', 'the seller sent the wrong color', 'the quality is not what it used to be',
  'it works well with my old phone', 'the connection drops every few minutes', 'the documentation is clear and the examples help',
];
const CLOSINGS = [
  'Five stars.', 'Would buy again.', 'Returned it.', 'Not worth the money.', 'Highly recommended.', 'Avoid.',
  'Overall I am happy with it.', 'Two stars, only because it arrived.', 'Still on the fence.', 'Great value.',
];

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box-Muller). */
function normal(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** A token count from the long-tailed distribution. */
export function drawLength(random: () => number): number {
  const l = Math.round(Math.exp(Math.log(MEDIAN_TOKENS) + SIGMA * normal(random)));
  return Math.min(MAX_TOKENS, Math.max(MIN_TOKENS, l));
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Words of a review long enough for `tokens` (sentences of an opening, clauses and a closing). */
function reviewWords(random: () => number, tokens: number): string[] {
  const words: string[] = [];
  while (words.length < tokens) {
    const parts = [random() < 0.4 ? `${pick(random, OPENINGS)},` : ''];
    const clauses = 1 + Math.floor(random() * 3);
    for (let c = 0; c < clauses; c++) parts.push(`${c > 0 ? (random() < 0.5 ? 'and' : 'but') : ''} ${pick(random, CLAUSES)}`);
    const sentence = parts.join(' ').trim().replace(/\s+/g, ' ');
    words.push(...`${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`.split(' '));
    if (random() < 0.3) words.push(...pick(random, CLOSINGS).split(' '));
  }
  return words;
}

export interface MixedText {
  readonly text: string;
  /** Tokens the example's tokenizer gives it, [CLS] and [SEP] included. */
  readonly tokens: number;
}

/**
 * `count` texts, seeded: each drawn length, then a review cut word by word to the longest prefix
 * with at most that many tokens (at least MIN_TOKENS).
 */
export function mixedTexts(tokenizerDir: string, count: number, seed = MIXED_SEED): MixedText[] {
  const json = JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer_config.json'), 'utf8'));
  const tokenizer = new Tokenizer(json, config);
  const countTokens = (text: string): number => tokenizer.encode(text).ids.length;
  const random = seededRandom(seed);
  const out: MixedText[] = [];
  for (let i = 0; i < count; i++) {
    const target = drawLength(random);
    const words = reviewWords(random, target);
    // Binary search for the longest prefix within the target (token count grows with the words).
    let lo = 1;
    let hi = words.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (countTokens(words.slice(0, mid).join(' ')) <= target) lo = mid;
      else hi = mid - 1;
    }
    const text = words.slice(0, lo).join(' ');
    out.push({ text, tokens: countTokens(text) });
  }
  return out;
}

/** Mean, percentiles and maximum of the texts' token counts (for the report). */
export function lengthSummary(texts: readonly MixedText[]): { mean: number; p50: number; p90: number; p99: number; max: number } {
  const sorted = texts.map((t) => t.tokens).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1]! };
}
