/** The mixed-length workload's lengths, the padding estimate, and the seed's configs the bench derives. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { modelSessionOptions } from '@tritium/backend-onnx';
import { DEFAULT_REPOSITORY } from '@tritium/example-setup';
import { drawLength, MAX_TOKENS, MIN_TOKENS, seededRandom } from './pipeline/mixed-texts.ts';
import { seedConfig, writeRepository, type CpuInstances } from './pipeline/repositories.ts';
import { paddingEfficiency } from './pipeline/tokens.ts';

describe('mixed-length workload', () => {
  it('draws the same long-tailed lengths from the same seed, 4 to 256 tokens', () => {
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 20_000 }, () => drawLength(random));
    };
    const lengths = draw(29);
    expect(draw(29)).toEqual(lengths);
    expect(Math.min(...lengths)).toBe(MIN_TOKENS);
    expect(Math.max(...lengths)).toBe(MAX_TOKENS);
    const sorted = [...lengths].sort((a, b) => a - b);
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    // Long-tailed: the mean sits well above the median, and a few texts are paragraphs.
    expect(sorted[10_000]).toBe(16);
    expect(mean).toBeGreaterThan(20);
    expect(mean).toBeLessThan(28);
    expect(lengths.filter((l) => l >= 100).length / lengths.length).toBeGreaterThan(0.01);
  });

  it('estimates what batches in arrival order pad to', () => {
    expect(paddingEfficiency([4, 4, 4, 4], 2)).toBe(1);
    // [4, 12] pads to 24, [8] to 8: 24 real of 32.
    expect(paddingEfficiency([4, 12, 8], 2)).toBe(24 / 32);
  });
});

describe("the bench's repositories", () => {
  it("derive the seed's configs by removing only what the example adds below them", () => {
    for (const model of ['sentiment_ensemble', 'tokenizer']) {
      const shipped = readFileSync(join(DEFAULT_REPOSITORY, model, 'config.pbtxt'), 'utf8');
      const seed = seedConfig(shipped);
      expect(shipped.startsWith(seed)).toBe(true);
      expect(seed).not.toContain('tritium.');
      expect(seed).toContain('max_queue_delay_microseconds: 10000 # 10ms');
      expect(shipped.slice(seed.length)).toContain('parameters { key: "tritium.batching" value: { string_value: "adaptive" } }');
    }
    const classifier = readFileSync(join(DEFAULT_REPOSITORY, 'bert_classifier', 'config.pbtxt'), 'utf8');
    expect(seedConfig(classifier)).toBe(classifier);
  });

  it("serve bert_classifier on the CPU with the seed's count, or with Triton's default CPU group (2 instances sharing the cores)", () => {
    const root = mkdtempSync(join(tmpdir(), 'bench-repos-'));
    try {
      const served = (instances: CpuInstances) => {
        const dir = writeRepository(root, 'pipeline-tokens', 'onnx', instances);
        const text = readFileSync(join(dir, 'bert_classifier', 'config.pbtxt'), 'utf8');
        const config = normalizeModelConfig(parseModelConfigText(text));
        return { group: config.instance_group[0]!, threads: modelSessionOptions(config).session.intraOpNumThreads };
      };
      const seed = served('seed-count');
      expect([seed.group.kind, seed.group.count, seed.threads]).toEqual(['KIND_CPU', 1, availableParallelism()]);
      const cpu = served('cpu-default');
      expect([cpu.group.kind, cpu.group.count, cpu.threads]).toEqual(['KIND_CPU', 2, Math.max(1, Math.floor(availableParallelism() / 2))]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
