/**
 * Poison isolation in the example pipeline's shape, through real model.ts workers:
 * the seed's `tokenizer` config (its own dynamic_batching block) and `sentiment_ensemble` config
 * (pipeline batching) from `model_repository/`, with stand-in models (see
 * fixtures/pipeline_poison/README.md). Concurrent requests with poisoned ones among them: exactly
 * the poisoned requests fail, each with the error of its own execution (a crashed worker's included:
 * its batch's requests are re-run alone). Run with the seed's 4
 * tokenizer instances and with 1 (a small host), where retried halves queue up together at the
 * tokenizer's own batcher.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, InferenceServer, tensorFromStrings, typedView } from '@tritium/core';
import { pythonLikeBackend } from '../src/index.ts';
import { FIXTURES } from './helpers.ts';

const SEED_REPOSITORY = fileURLToPath(new URL('../../../model_repository/', import.meta.url));

describe.each([4, 1])('poison isolation in the example pipeline (real workers, seed configs, %i tokenizer instance(s))', (tokenizers) => {
  let repo: string;
  let server: InferenceServer;
  beforeAll(async () => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-poison-'));
    cpSync(path.join(FIXTURES, 'pipeline_poison/tokenizer'), path.join(repo, 'tokenizer'), { recursive: true });
    cpSync(path.join(FIXTURES, 'pipeline_poison/bert_classifier'), path.join(repo, 'bert_classifier'), { recursive: true });
    const seedTokenizer = readFileSync(path.join(SEED_REPOSITORY, 'tokenizer/config.pbtxt'), 'utf8');
    expect(seedTokenizer).toMatch(/count: 4\b/);
    writeFileSync(path.join(repo, 'tokenizer/config.pbtxt'), seedTokenizer.replace(/count: 4\b/, `count: ${tokenizers}`));
    cpSync(path.join(SEED_REPOSITORY, 'sentiment_ensemble'), path.join(repo, 'sentiment_ensemble'), { recursive: true });
    server = new InferenceServer({ repositories: [repo], backends: [pythonLikeBackend()] });
    await server.start();
  });
  afterAll(async () => {
    await server?.stop();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  /** Sends every text at once as its own request; each outcome is LOGITS or the error. */
  async function sendAll(texts: string[]): Promise<(number[] | InferError)[]> {
    return Promise.all(
      texts.map((text, i) =>
        server.infer({ id: `r${i}`, model: 'sentiment_ensemble', inputs: [tensorFromStrings('TEXT', [1, 1], [text])] }).then(
          (r) => [...(typedView(r.outputs[0]!) as Float32Array)],
          (e: unknown) => e as InferError,
        ),
      ),
    );
  }

  const logitsOf = (text: string) => [[...text].reduce((n, c) => n + c.charCodeAt(0), 0), text.length];

  const cases: { name: string; poisoned: Record<number, string> }[] = [
    { name: 'one poisoned request at the tokenizer (the step with its own batcher)', poisoned: { 3: "cannot tokenize 'POISON 3'" } },
    { name: 'one poisoned request at the classifier', poisoned: { 5: "cannot classify row 0 of request 'r5'" } },
    { name: 'two poisoned requests, one per step', poisoned: { 1: "cannot tokenize 'POISON 1'", 6: "cannot classify row 0 of request 'r6'" } },
    { name: "one request that crashes the tokenizer's worker", poisoned: { 2: 'crashed: worker exited with code 9' } },
  ];
  for (const { name, poisoned } of cases) {
    it(`8 concurrent requests, ${name}: exactly the poisoned fail, each with its own error`, async () => {
      const texts = Array.from({ length: 8 }, (_, i) => {
        const own = poisoned[i];
        if (own?.startsWith('cannot tokenize')) return `POISON ${i}`;
        if (own?.includes('crashed')) return `CRASH ${i}`;
        if (own) return `boom ${i}!`;
        return `sentence number ${i} is fine`;
      });
      const outcomes = await sendAll(texts);
      outcomes.forEach((outcome, i) => {
        const own = poisoned[i];
        if (own === undefined) {
          expect(outcome, `request ${i} ('${texts[i]}') should succeed`).toEqual(logitsOf(texts[i]!));
          return;
        }
        expect(InferError.is(outcome), `request ${i} should fail`).toBe(true);
        const message = (outcome as InferError).message;
        expect(message).toContain("in ensemble 'sentiment_ensemble', ");
        expect(message).toContain(own);
        // Its own error: it names no other request.
        for (const [j, other] of Object.entries(poisoned)) if (Number(j) !== i) expect(message).not.toContain(other);
      });
    });
  }
});
