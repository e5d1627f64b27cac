import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SPECIAL_TOKENS } from './vocab.ts';

/** Writes `path` through a temporary file and a rename, so a concurrent reader (a second setup
 * run, a loading server) sees the old file or the new one, never a partial one. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/**
 * Writes a Hugging Face tokenizer folder for a BERT uncased WordPiece vocabulary: `vocab.txt`
 * (the classic format), `tokenizer.json` (the `tokenizers` library's format, which
 * `@huggingface/transformers`' `AutoTokenizer` reads), `tokenizer_config.json` and
 * `special_tokens_map.json`, i.e. what `save_pretrained` writes for bert-base-uncased.
 */
export function writeBertTokenizerFolder(dir: string, vocab: readonly string[], modelMaxLength = 512): void {
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, 'vocab.txt'), `${vocab.join('\n')}\n`);
  writeFileAtomic(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
  writeFileAtomic(join(dir, 'tokenizer_config.json'), `${JSON.stringify(tokenizerConfig(modelMaxLength), null, 2)}\n`);
  writeFileAtomic(join(dir, 'special_tokens_map.json'), `${JSON.stringify(specialTokensMap(), null, 2)}\n`);
}

/** `tokenizer.json` for BertTokenizerFast(do_lower_case=True), as `tokenizers` serializes it. */
export function tokenizerJson(vocab: readonly string[]): Record<string, unknown> {
  const { pad, unk, cls, sep, mask } = SPECIAL_TOKENS;
  const added = [pad, unk, cls, sep, mask].map(({ token, id }) => ({
    id,
    content: token,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const specialToken = (id: string, typeId: number) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id: 'A' | 'B', typeId: number) => ({ Sequence: { id, type_id: typeId } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [specialToken(cls.token, 0), sequence('A', 0), specialToken(sep.token, 0)],
      pair: [
        specialToken(cls.token, 0),
        sequence('A', 0),
        specialToken(sep.token, 0),
        sequence('B', 1),
        specialToken(sep.token, 1),
      ],
      special_tokens: Object.fromEntries(
        [cls, sep].map(({ token, id }) => [token, { id: token, ids: [id], tokens: [token] }]),
      ),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: unk.token,
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab.map((token, id) => [token, id])),
    },
  };
}

/** `tokenizer_config.json` as bert-base-uncased's. */
export function tokenizerConfig(modelMaxLength: number): Record<string, unknown> {
  return {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    tokenize_chinese_chars: true,
    strip_accents: null,
    clean_up_tokenization_spaces: true,
    model_max_length: modelMaxLength,
    padding_side: 'right',
    truncation_side: 'right',
    ...specialTokensMap(),
  };
}

function specialTokensMap(): Record<string, string> {
  const { pad, unk, cls, sep, mask } = SPECIAL_TOKENS;
  return {
    unk_token: unk.token,
    sep_token: sep.token,
    pad_token: pad.token,
    cls_token: cls.token,
    mask_token: mask.token,
  };
}
