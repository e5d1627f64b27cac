/**
 * The documented example of `@tritium/backend-python-like/testing`: the example tokenizer
 * (model_repository/tokenizer) loaded from its folder into the test, typed by the Spec that
 * `tritium types` generated beside its model.ts. One execute takes the batch the dynamic batcher
 * would form; the model answers the whole batch at once, padded to the longest row, and the
 * backend splits it back to the requests.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel, type TestModel } from '@tritium/backend-python-like/testing';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the example model's generated types: model_repository holds files, not a project
import type { Spec } from '../../../model_repository/tokenizer/1/model-types.js';
import { DEFAULT_REPOSITORY, setupExample } from '../src/index.ts';

describe('model_repository/tokenizer, unit-tested without a server', () => {
  let tokenizer: TestModel<Spec>;
  beforeAll(async () => {
    setupExample(); // the tokenizer's vocabulary files
    tokenizer = await loadModel<Spec>(path.join(DEFAULT_REPOSITORY, 'tokenizer'));
  }, 120_000);
  afterAll(() => tokenizer?.finalize());

  it("gives bert-base-uncased's ids, one response per request, padded to the batch's longest row", async () => {
    const { responses } = await tokenizer.execute([{ TEXT: ['This is a fantastic technical article.'] }, { TEXT: ['I am not impressed with the performance.'] }]);
    const [fantastic, impressed] = responses;
    // Row 1 has 9 tokens, row 2 has 10: the batch is padded to 10 ([PAD] is 0, its mask 0).
    expect(fantastic!.outputs.INPUT_IDS.shape).toEqual([1, 10]);
    expect([...fantastic!.outputs.INPUT_IDS.data]).toEqual([101n, 2023n, 2003n, 1037n, 10392n, 4087n, 3720n, 1012n, 102n, 0n]);
    expect([...fantastic!.outputs.ATTENTION_MASK.data]).toEqual([1n, 1n, 1n, 1n, 1n, 1n, 1n, 1n, 1n, 0n]);
    expect([...impressed!.outputs.INPUT_IDS.data]).toEqual([101n, 1045n, 2572n, 2025n, 7622n, 2007n, 1996n, 2836n, 1012n, 102n]);
  });

  it('takes several rows in one request, as a client sending TEXT of shape [2, 1] does', async () => {
    const { responses } = await tokenizer.execute([{ TEXT: ['hello', 'hello world'] }]);
    expect(responses[0]!.outputs.INPUT_IDS.toArray()).toEqual([
      [101n, 7592n, 102n, 0n],
      [101n, 7592n, 2088n, 102n],
    ]);
  });
});
