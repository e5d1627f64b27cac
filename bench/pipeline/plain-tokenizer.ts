import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';

/** A batch tokenized as the example's `tokenizer/1/model.ts` does it: ids and mask, padded to the longest row. */
export interface TokenizedBatch {
  readonly ids: BigInt64Array;
  readonly mask: BigInt64Array;
  readonly dims: [number, number];
}

/** Longest row the example's model.ts keeps (its `max_length`). */
const MAX_LENGTH = 512;

/**
 * The example tokenizer's own code (`tokenizer/1/model.ts`, tokenizers.js), minus its I/O, on this
 * thread: what the limit and the in-worker comparison must run to compare like with like.
 * (transformers.js' AutoTokenizer gives the same ids but is slower: it is not the code served.)
 */
export function plainTokenizer(tokenizerDir: string): (texts: readonly string[]) => TokenizedBatch {
  const json = JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer_config.json'), 'utf8'));
  const tokenizer = new Tokenizer(json, config);
  const pad = BigInt(tokenizer.token_to_id(config.pad_token) ?? 0);
  // The loop below is model.ts's execute, line for line (so the two cost the same).
  return (texts) => {
    const rows: number[][] = texts.map((text) => tokenizer.encode(text).ids);
    const width = Math.min(Math.max(0, ...rows.map((ids) => ids.length)), MAX_LENGTH);
    const ids = new BigInt64Array(rows.length * width).fill(pad);
    const mask = new BigInt64Array(rows.length * width);
    rows.forEach((row, r) => {
      row.slice(0, width).forEach((id, c) => {
        ids[r * width + c] = BigInt(id);
        mask[r * width + c] = 1n;
      });
    });
    return { ids, mask, dims: [rows.length, width] };
  };
}
