import { beforeAll, describe, expect, it } from 'vitest';
import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { setupExample } from '../src/index.ts';

/** Runs the generated bert_classifier/1/model.onnx in onnxruntime on tokenized sentences. */
describe('generated bert_classifier (AFINN-165 sentiment through a BERT encoder)', () => {
  let tokenizer: PreTrainedTokenizer;
  let session: ort.InferenceSession;
  beforeAll(async () => {
    const { tokenizerDir, modelPath } = setupExample();
    tokenizer = await AutoTokenizer.from_pretrained(tokenizerDir, { local_files_only: true });
    session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1 });
    return () => session.release();
  });

  async function classify(sentences: string[]): Promise<Array<[number, number]>> {
    const enc = tokenizer(sentences, { padding: true, truncation: true });
    const feeds = {
      INPUT_IDS: new ort.Tensor('int64', enc.input_ids.data as BigInt64Array, enc.input_ids.dims),
      ATTENTION_MASK: new ort.Tensor('int64', enc.attention_mask.data as BigInt64Array, enc.attention_mask.dims),
    };
    const logits = (await session.run(feeds)).LOGITS!.data as Float32Array;
    return sentences.map((_, i) => [logits[2 * i]!, logits[2 * i + 1]!]);
  }

  it("scores the seed's sentences like its example output (index 1 = positive)", async () => {
    const [positive, negative] = await classify([
      'This is a fantastic technical article.',
      'I am not impressed with the performance.',
    ]);
    expect(positive![1]).toBeGreaterThan(2);
    expect(positive![0]).toBeLessThan(-2);
    expect(negative![0]).toBeGreaterThan(2);
    expect(negative![1]).toBeLessThan(-2);
  });

  it('reads polarity from the lexicon and flips it after a negator within a few tokens', async () => {
    const cases: Array<[string, 'POS' | 'NEG']> = [
      ['I love this movie', 'POS'],
      ['This is terrible.', 'NEG'],
      ['The food was not good at all.', 'NEG'],
      ['Not bad, actually.', 'POS'],
      ["I don't like it.", 'NEG'],
      ['This is the worst service ever.', 'NEG'],
      ['It was not terrible, it was amazing.', 'POS'],
      ['I am happy', 'POS'],
      ['I am not happy', 'NEG'],
      ['I never said it was great.', 'NEG'],
    ];
    const logits = await classify(cases.map(([s]) => s));
    expect(logits.map(([neg, pos]) => (pos > neg ? 'POS' : 'NEG'))).toEqual(cases.map(([, label]) => label));
  });

  it('is neutral on a sentence without rated words, and pads without changing an answer', async () => {
    const [neutral, padded] = await classify(['The article is about databases.', 'This is terrible.']);
    expect(Math.abs(neutral![1] - neutral![0])).toBeLessThan(0.1);
    const [alone] = await classify(['This is terrible.']);
    expect(padded![0]).toBeCloseTo(alone![0], 3);
  });
});
