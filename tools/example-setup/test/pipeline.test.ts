import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpc, http, InferInput, InferRequestedOutput } from '@tritium/client';
import { DEFAULT_REPOSITORY, setupExample, startTritium, type ServeProcess } from '../src/index.ts';

/**
 * The seed's example end to end: `tritium serve` (a real child process, as `npm start` runs it)
 * on model_repository/ as shipped (the seed's configs, including bert_classifier's `KIND_GPU,
 * gpus: [0]`, which loads on CPU with a warning on a GPU-less host, and adaptive batching below the
 * seed's text of the two that batch),
 * then the seed's client call over HTTP and gRPC.
 */
const SEED = ['This is a fantastic technical article.', 'I am not impressed with the performance.'];

describe('sentiment_ensemble served by tritium serve', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    setupExample();
    server = await startTritium(DEFAULT_REPOSITORY);
  });
  afterAll(async () => {
    await server?.stop();
  });

  function seedInput(sentences: string[]): InferInput {
    return new InferInput('TEXT', [sentences.length, 1], 'BYTES').setData(sentences);
  }

  it("scores the seed's first sentence positive and the second negative (HTTP, one request)", async () => {
    const client = new http.InferenceServerClient(server.httpUrl);
    try {
      const result = await client.infer('sentiment_ensemble', [seedInput(SEED)], { outputs: [new InferRequestedOutput('LOGITS')] });
      const out = result.output('LOGITS')!;
      expect(out.shape).toEqual([2, 2]);
      const logits = result.asTypedArray('LOGITS', 'FP32');
      expect(logits[1]!).toBeGreaterThan(logits[0]!); // positive
      expect(logits[2]!).toBeGreaterThan(logits[3]!); // negative
    } finally {
      client.close();
    }
  });

  it('gives the same answers over gRPC to separate concurrent requests (batched together)', async () => {
    const client = new grpc.InferenceServerClient(server.grpcUrl);
    try {
      const results = await Promise.all(SEED.map((s) => client.infer('sentiment_ensemble', [seedInput([s])])));
      const [pos, neg] = results.map((r) => r.asTypedArray('LOGITS', 'FP32'));
      expect(pos![1]!).toBeGreaterThan(pos![0]!);
      expect(neg![0]!).toBeGreaterThan(neg![1]!);
    } finally {
      client.close();
    }
  });

  it('returns probabilities from the softmax postprocess step', async () => {
    const client = new http.InferenceServerClient(server.httpUrl);
    try {
      const result = await client.infer('sentiment_ensemble_softmax', [seedInput(SEED)]);
      const logits = result.asTypedArray('LOGITS', 'FP32');
      const probabilities = result.asTypedArray('PROBABILITIES', 'FP32');
      for (const row of [0, 1]) {
        const [a, b] = [logits[2 * row]!, logits[2 * row + 1]!];
        expect(probabilities[2 * row + 1]!).toBeCloseTo(Math.exp(b) / (Math.exp(a) + Math.exp(b)), 5);
        expect(probabilities[2 * row]! + probabilities[2 * row + 1]!).toBeCloseTo(1, 6);
      }
      expect(probabilities[1]!).toBeGreaterThan(0.9);
      expect(probabilities[2]!).toBeGreaterThan(0.9);
    } finally {
      client.close();
    }
  });
});
