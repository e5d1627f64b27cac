/**
 * Triton's ensemble validation corpus (`autofill_noplatform/ensemble/*`), run the way Triton's
 * L0_model_config harness runs it: each case becomes a model repository (version folders from
 * version-dirs.txt), the server starts with auto-complete on, must FAIL to start, and one of its
 * error lines must match an `expected*` grep regex.
 *
 * Composing models name Triton QA backends; they run on our real worker-hosted test backends:
 * `identity` → identityBackend(); `repeat` (Triton's decoupled repeat backend) → identityBackend()
 * registered under the name `repeat`. Validation only needs their configs (decoupled flag included),
 * so what they compute does not matter here.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { identityBackend } from '@tritium/core/testing';
import type { Backend } from '../../src/backend/spi.ts';
import { InferenceServer } from '../../src/server/inference-server.ts';
import { parseModelConfigText } from '../../src/config/pbtxt-parser.ts';
import { modelConfigToJson } from '../../src/config/json.ts';
import { corpusUnavailableReason, loadCorpusCases, matchesExpected, type CorpusCase } from '../config/corpus-cases.ts';

const backends: Backend[] = [identityBackend(), { ...identityBackend(), name: 'repeat' }];
const temps: string[] = [];

afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

/** Lays a case out as a repository: a single-model case becomes `<repo>/<case>/`. */
function materialize(c: CorpusCase): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-corpus-'));
  temps.push(root);
  const target = c.singleModel ? path.join(root, c.modelName) : root;
  cpSync(c.folder, target, { recursive: true, filter: (src) => !/\/expected[^/]*$/.test(src) });
  for (const v of c.versionDirs) mkdirSync(path.join(target, v), { recursive: true });
  return root;
}

async function startFailure(c: CorpusCase): Promise<string | undefined> {
  const server = new InferenceServer({ repositories: [materialize(c)], backends, strictModelConfig: false });
  try {
    await server.start();
  } catch (err) {
    return (err as Error).message;
  }
  await server.stop();
  return undefined;
}

const unavailable = corpusUnavailableReason();
if (unavailable) console.warn(`skipped: ${unavailable}`);
const cases = loadCorpusCases().filter((c) => c.group === 'autofill_noplatform/ensemble');
const successCases = loadCorpusCases().filter((c) => c.group === 'autofill_noplatform_success/ensemble');

describe.skipIf(unavailable !== undefined)('Triton ensemble validation corpus', () => {
  it('lists the ensemble cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  for (const c of cases) {
    it(c.id, async () => {
      const message = await startFailure(c);
      expect(message, 'server must refuse to start').toBeDefined();
      const lines = message!.split('\n');
      const hit = lines.some((line) => matchesExpected(c, line));
      expect(hit, `no line matches ${c.expected.map((e) => e.pattern).join(' | ')}:\n${message}`).toBe(true);
    });
  }

  // Passing means the server starts, serves every model, and serves each ensemble's config as Triton did.
  for (const c of successCases) {
    it(c.id, async () => {
      const server = new InferenceServer({ repositories: [materialize(c)], backends, strictModelConfig: false });
      try {
        await server.start();
        const index = await server.repositoryIndex();
        expect(index.length).toBeGreaterThan(1);
        expect(index.filter((e) => e.state !== 'READY')).toEqual([]);
        // Each ensemble folder carries the config Triton served for it (`expected`, a text proto).
        let compared = 0;
        for (const e of index) {
          const expectedFile = path.join(c.folder, e.name, 'expected');
          if (!existsSync(expectedFile)) continue;
          compared++;
          const expected = parseModelConfigText(readFileSync(expectedFile, 'utf8'), { file: expectedFile });
          expect(modelConfigToJson(server.modelConfig(e.name))).toBe(modelConfigToJson(expected));
        }
        expect(compared).toBeGreaterThan(0);
      } finally {
        await server.stop();
      }
    });
  }
});
