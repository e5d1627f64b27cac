/**
 * Length-aware batching on the example pipeline, through `tritium serve` (real tokenizer workers,
 * the real ONNX classifier): sentiment_ensemble with a small padded-token budget, so a pipeline
 * batch of mixed lengths runs in several length groups. For random texts sent at once, every
 * request's LOGITS equal (within 1e-5) what the same text gets sent alone.
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
});
