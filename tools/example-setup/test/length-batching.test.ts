/**
 * Length-aware batching on the example pipeline, through `tritium serve` (real tokenizer workers,
 * the real ONNX classifier): sentiment_ensemble with a small padded-token budget, so a pipeline
 * batch of mixed lengths runs in several length groups. For random texts sent at once, every
 * request's LOGITS equal (within 1e-5) what the same text gets sent alone. And the classifier
 * alone with a token budget and `tritium.split_rows` (bert_tokens): a request of several rows over
 * the budget is split into executions within it, each row's LOGITS equal to the row sent alone.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, InferInput } from '@tritium/client';
import { DEFAULT_REPOSITORY, setupExample, startTritium, type ServeProcess } from '../src/index.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WORDS = ['the', 'battery', 'lasts', 'all', 'day', 'but', 'screen', 'is', 'far', 'too', 'dim', 'not', 'impressed', 'great', 'value', 'shipping', 'took', 'two', 'weeks', 'and', 'support', 'was', 'helpful'];
const TOKENS = `
parameters { key: "tritium.batch_tokens" value: { string_value: "96" } }
parameters { key: "tritium.batch_tokens.lengths" value: { string_value: "tokenized_mask" } }
parameters { key: "tritium.batch_tokens.execution_cost" value: { string_value: "0" } }
`;
/** bert_classifier as a batching model with a padded-token budget of 64 that splits what exceeds it. */
const MODEL_TOKENS = `
dynamic_batching { }
parameters { key: "tritium.pad.INPUT_IDS" value: { string_value: "0" } }
parameters { key: "tritium.pad.ATTENTION_MASK" value: { string_value: "0" } }
parameters { key: "tritium.batch_tokens" value: { string_value: "64" } }
parameters { key: "tritium.batch_tokens.lengths" value: { string_value: "ATTENTION_MASK" } }
parameters { key: "tritium.split_rows" value: { string_value: "256" } }
`;

describe('length-aware batching on the example pipeline (tritium serve, property)', () => {
  let repo: string;
  let server: ServeProcess;
  let client: InstanceType<typeof http.InferenceServerClient>;
  beforeAll(async () => {
    setupExample();
    // Inside the workspace, so the tokenizer's model.ts resolves its npm imports as the example's does.
    mkdirSync(path.join(ROOT, 'tmp'), { recursive: true });
    repo = mkdtempSync(path.join(ROOT, 'tmp', 'length-batching-'));
    for (const m of ['tokenizer', 'bert_classifier', 'sentiment_ensemble']) cpSync(path.join(DEFAULT_REPOSITORY, m), path.join(repo, m), { recursive: true });
    const ensemble = path.join(repo, 'sentiment_ensemble', 'config.pbtxt');
    writeFileSync(ensemble, readFileSync(ensemble, 'utf8') + TOKENS);
    cpSync(path.join(DEFAULT_REPOSITORY, 'bert_classifier'), path.join(repo, 'bert_tokens'), { recursive: true });
    const classifier = path.join(repo, 'bert_tokens', 'config.pbtxt');
    writeFileSync(classifier, readFileSync(classifier, 'utf8').replace('name: "bert_classifier"', 'name: "bert_tokens"') + MODEL_TOKENS);
    server = await startTritium(repo);
    client = new http.InferenceServerClient(server.httpUrl, { concurrency: 64 });
  }, 180_000);
  afterAll(async () => {
    client?.close();
    await server?.stop();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  const logits = async (text: string): Promise<number[]> => {
    const result = await client.infer('sentiment_ensemble', [new InferInput('TEXT', [1, 1], 'BYTES').setData([text])]);
    return [...result.asTypedArray('LOGITS', 'FP32')];
  };

  it('answers each text sent with others as it answers it alone, within 1e-5', async () => {
    const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 60 }).map((w) => w.join(' '));
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 4, maxLength: 24 }), async (texts) => {
        const together = await Promise.all(texts.map(logits));
        for (let i = 0; i < texts.length; i++) {
          const alone = await logits(texts[i]!);
          together[i]!.forEach((v, k) => expect(Math.abs(v - alone[k]!), `text ${i} logit ${k}: ${v} vs ${alone[k]}`).toBeLessThanOrEqual(1e-5));
        }
      }),
      { numRuns: 4 },
    );
    // The budget did cut pipeline batches into length groups: the ensemble counted their tokens.
    const stats = (await (await fetch(`http://${server.httpUrl}/v2/models/sentiment_ensemble/stats`)).json()) as {
      model_stats: { tritium?: { tokens: { executions: number; real: number; padded: number } } }[];
    };
    const tokens = stats.model_stats[0]!.tritium!.tokens;
    expect(tokens.executions).toBeGreaterThan(4 * 5);
    expect(tokens.real / tokens.padded).toBeGreaterThan(0.5);
  }, 300_000);

  it('splits a request of more padded tokens than a model\'s budget into executions within it, rows as alone', async () => {
    const texts = ['great value', 'the battery lasts all day but the screen is far too dim and support was not helpful at all', 'not impressed', 'shipping took two weeks and the screen is dim', 'great'];
    const tokenized = await client.infer('tokenizer', [new InferInput('TEXT', [texts.length, 1], 'BYTES').setData(texts)]);
    const ids = tokenized.asTypedArray('INPUT_IDS', 'INT64');
    const mask = tokenized.asTypedArray('ATTENTION_MASK', 'INT64');
    const width = ids.length / texts.length;
    expect(texts.length * width, 'the request exceeds the budget of 64').toBeGreaterThan(64);
    const classify = async (rows: number, idValues: BigInt64Array, maskValues: BigInt64Array): Promise<Float32Array> => {
      const w = idValues.length / rows;
      const result = await client.infer('bert_tokens', [
        new InferInput('INPUT_IDS', [rows, w], 'INT64').setData(idValues),
        new InferInput('ATTENTION_MASK', [rows, w], 'INT64').setData(maskValues),
      ]);
      return result.asTypedArray('LOGITS', 'FP32');
    };
    const together = await classify(texts.length, ids, mask);
    expect(together.length).toBe(texts.length * 2);
    for (let r = 0; r < texts.length; r++) {
      const row = mask.subarray(r * width, (r + 1) * width);
      const own = row.lastIndexOf(1n) + 1;
      const alone = await classify(1, ids.slice(r * width, r * width + own), mask.slice(r * width, r * width + own));
      for (let k = 0; k < 2; k++) expect(Math.abs(together[r * 2 + k]! - alone[k]!), `row ${r} logit ${k}`).toBeLessThanOrEqual(1e-5);
    }
    const stats = (await (await fetch(`http://${server.httpUrl}/v2/models/bert_tokens/stats`)).json()) as {
      model_stats: { tritium?: { tokens: { executions: number; padded: number } } }[];
    };
    const tokens = stats.model_stats[0]!.tritium!.tokens;
    // The request alone ran in ceil(rows / floor(64 / width)) executions; then each row alone.
    expect(tokens.executions).toBe(Math.ceil(texts.length / Math.floor(64 / width)) + texts.length);
  }, 120_000);
});
