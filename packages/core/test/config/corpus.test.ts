/**
 * Runs Triton's qa/L0_model_config corpus the way its README describes, for every case that is
 * about configuration alone: the config (platform appended for noautofill) goes through parse →
 * normalize → validate, must be refused, and the error must match one `expected*` grep pattern.
 * Cases that need another part of Tritium are listed as todo with their owner (corpus-cases.ts).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/index.ts';
import { modelConfigToJson, normalizeModelConfig, parseModelConfigText, validateModelConfig } from '../../src/config/index.ts';
import type { VersionDirEntry } from '../../src/config/index.ts';
import { corpusUnavailableReason, loadCorpusCases, matchesExpected, withPlatform, type CorpusCase } from './corpus-cases.ts';

/**
 * Triton's L0 suite runs on a machine with (at least) GPU 0; its GPU cases (`invalid_gpu`,
 * `negative_gpu`) expect that. Tritium itself assumes no GPU unless told.
 */
const TRITON_CI_GPUS = [0];

/** Entries of the first version folder: the harness's empty folders plus any shipped with the case. */
function firstVersionEntries(c: CorpusCase): VersionDirEntry[] | undefined {
  const versions = new Set(c.versionDirs.filter((v) => /^\d+$/.test(v)));
  for (const f of readdirSync(c.folder)) {
    if (/^\d+$/.test(f) && statSync(path.join(c.folder, f)).isDirectory()) versions.add(f);
  }
  if (versions.size === 0) return undefined;
  const first = [...versions].sort()[0]!;
  const dir = path.join(c.folder, first);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((name) => ({ name, isDirectory: statSync(path.join(dir, name)).isDirectory() }));
}

/** Loads one model's config as the server would; returns the error message, or undefined if it loads. */
function loadError(c: CorpusCase): string | undefined {
  const file = path.join(c.folder, 'config.pbtxt');
  try {
    const text = withPlatform(readFileSync(file, 'utf8'), c.platform);
    const parsed = parseModelConfigText(text, { file });
    const normalized = normalizeModelConfig(parsed, {
      modelName: c.modelName,
      firstVersionEntries: firstVersionEntries(c),
      supportedGpus: TRITON_CI_GPUS,
    });
    validateModelConfig(normalized, { supportedGpus: TRITON_CI_GPUS, directoryName: c.modelName });
    return undefined;
  } catch (e) {
    expect(InferError.is(e), `not an InferError: ${String(e)}`).toBe(true);
    expect((e as InferError).code).toBe('INVALID_ARG');
    return (e as InferError).message;
  }
}

const unavailable = corpusUnavailableReason();
const cases = loadCorpusCases();

describe('Triton L0_model_config corpus', () => {
  if (unavailable) {
    console.warn(`skipped: ${unavailable}`);
    it.skip(`skipped: ${unavailable}`, () => {});
    return;
  }

  it('finds the corpus folders the README lists', () => {
    const groups = new Set(cases.map((c) => c.group));
    for (const g of ['noautofill_platform', 'special_cases', 'autofill_noplatform/common', 'autofill_noplatform/ensemble']) {
      expect(groups.has(g), g).toBe(true);
    }
    expect(cases.filter((c) => c.group === 'noautofill_platform').length).toBeGreaterThanOrEqual(100);
  });

  for (const c of cases) {
    if (c.pending) {
      it.todo(`${c.id} — pending on ${c.pending.owner}: ${c.pending.reason}`);
      continue;
    }
    // Cases of a runner that has landed run in that runner's own suite.
    if (c.runner !== 'config') continue;
    it(c.id, () => {
      expect(c.expected.length, 'case has expected* files').toBeGreaterThan(0);
      const message = loadError(c);
      expect(message, 'the config must be refused').toBeDefined();
      expect(
        matchesExpected(c, message!),
        `error did not match any expected pattern:\n  got: ${message}\n  expected one of:\n${c.expected
          .map((e) => `    ${e.file}: ${e.pattern}`)
          .join('\n')}`,
      ).toBe(true);
    });
  }
});

/**
 * The success cases of custom-backend models get no backend auto-complete in Triton, so the config
 * it served is core normalization alone: compare ours with `expected` (as Triton's JSON form).
 * The full case (a running server, HTTP and gRPC) stays with the server runner.
 */
describe('Triton L0_model_config corpus: normalization of served custom-backend configs', () => {
  const custom = cases.filter((c) => c.group === 'autofill_noplatform_success/custom');
  if (unavailable || custom.length === 0) {
    console.warn(`skipped: ${unavailable ?? 'no autofill_noplatform_success/custom cases'}`);
    it.skip(`skipped: ${unavailable ?? 'no autofill_noplatform_success/custom cases'}`, () => {});
    return;
  }
  for (const c of custom) {
    it(`${c.id}: normalize(config.pbtxt) is the config Triton served`, () => {
      const file = path.join(c.folder, 'config.pbtxt');
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const ours = normalizeModelConfig(parseModelConfigText(text, { file }), {
        modelName: c.modelName,
        firstVersionEntries: firstVersionEntries(c),
        supportedGpus: TRITON_CI_GPUS,
      });
      validateModelConfig(ours, { supportedGpus: TRITON_CI_GPUS, directoryName: c.modelName });
      const expectedFile = path.join(c.folder, c.expected[0]!.file);
      const served = parseModelConfigText(readFileSync(expectedFile, 'utf8'), { file: expectedFile });
      expect(modelConfigToJson(ours, { indent: 2 })).toBe(modelConfigToJson(served, { indent: 2 }));
    });
  }
});
