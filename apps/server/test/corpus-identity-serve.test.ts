/**
 * Every case of Triton's L0_model_config corpus that needs Triton's
 * `identity` backend loads through a real `tritium serve` process (the CLI, its built-in example
 * backends, nothing injected) and fails or succeeds exactly as Triton's expected output says,
 * harnessed as Triton's qa/L0_model_config/test.sh does:
 * - failing cases (`autofill_noplatform/*`, `special_cases/*`): the server must exit non-zero and
 *   one of its error lines (`^E[0-9]{4}...`) must match an `expected*` grep pattern;
 * - success cases (`autofill_noplatform_success/*`): the server must start, serve every model READY,
 *   and the case model's config read back over HTTP must equal its `expected` (a text proto, as
 *   protobuf messages, adapted to a host without GPUs).
 * A case "needs identity" when one of its models is served by the identity backend
 * (`backend: "identity"`, or a folder named `<model>.identity`).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpInferenceServerClient } from '@tritium/client';
import { parseModelConfigText } from '@tritium/core/config';
// The corpus's one reader (cases, grep patterns, version folders) lives with core's config tests.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { corpusUnavailableReason, loadCorpusCases, matchesExpected, type CorpusCase } from '../../../packages/core/test/config/corpus-cases.ts';
import { canonicalConfig, onCpuHost } from './support/l0-expected.ts';
import { errorLines, startServeProcess } from './support/serve-process.ts';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function configsUnder(folder: string): { dir: string; text: string }[] {
  const out: { dir: string; text: string }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const p = path.join(dir, entry);
      if (statSync(p).isDirectory()) walk(p);
      else if (entry === 'config.pbtxt') out.push({ dir, text: readFileSync(p, 'utf8') });
    }
  };
  walk(folder);
  return out;
}

function needsIdentity(c: CorpusCase): boolean {
  if (c.singleModel && c.modelName.endsWith('.identity')) return true;
  return configsUnder(c.folder).some(({ text }) => /^\s*backend\s*:\s*"identity"/m.test(text));
}

/** The case as Triton's harness lays it out: `models/<case>` for one model, the folder's models otherwise. */
function materialize(c: CorpusCase): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'tritium-l0-identity-'));
  temps.push(root);
  const target = c.singleModel ? path.join(root, c.modelName) : root;
  cpSync(c.folder, target, { recursive: true, filter: (src) => !/\/expected[^/]*$/.test(src) });
  for (const v of c.versionDirs) mkdirSync(path.join(target, v), { recursive: true });
  if (c.id === 'special_cases/runtime_escape') {
    // test.sh plants the library the runtime path escapes to.
    mkdirSync(path.join(target, 'dummy_runtime'), { recursive: true });
    writeFileSync(path.join(target, 'dummy_runtime', 'libtriton_identity.so'), '');
  }
  return root;
}

/** test.sh's server arguments per group. */
function serveArgs(c: CorpusCase, repo: string): string[] {
  const args = [`--model-repository=${repo}`, '--exit-timeout-secs=5'];
  if (c.group.startsWith('autofill_noplatform')) args.push('--strict-model-config=false');
  return args;
}

const unavailable = corpusUnavailableReason();
if (unavailable) console.warn(`skipped: ${unavailable}`);
const cases = loadCorpusCases().filter((c) => !c.platform && needsIdentity(c));

describe.skipIf(unavailable !== undefined).concurrent('Triton L0_model_config cases that need identity, through tritium serve', () => {
  it('finds them', () => {
    // 2 special cases, 12 ensemble failures, 2 custom and 4 ensemble successes.
    expect(cases.map((c) => c.id)).toHaveLength(20);
    expect(new Set(cases.map((c) => c.group))).toEqual(
      new Set(['special_cases', 'autofill_noplatform/ensemble', 'autofill_noplatform_success/custom', 'autofill_noplatform_success/ensemble']),
    );
  });

  for (const c of cases) {
    it(`${c.id} (${c.outcome === 'fail' ? 'refuses to start' : 'serves the expected config'})`, async () => {
      const serve = startServeProcess(serveArgs(c, materialize(c)));
      try {
        if (c.outcome === 'fail') {
          const code = await serve.exited;
          expect(code, serve.log()).not.toBe(0);
          const lines = errorLines(serve.log());
          const hit = lines.some((line) => matchesExpected(c, line));
          expect(hit, `no error line matches ${c.expected.map((e) => e.pattern).join(' | ')}:\n${serve.log()}`).toBe(true);
          return;
        }
        const ports = await serve.started;
        const client = new HttpInferenceServerClient(`127.0.0.1:${ports.http}`);
        try {
          const index = await client.getModelRepositoryIndex();
          expect(index.length).toBeGreaterThan(0);
          expect(index.filter((e) => e.state !== 'READY'), serve.log()).toEqual([]);
          const expectedDir = c.singleModel ? c.folder : path.join(c.folder, c.modelName);
          const expectedFiles = readdirSync(expectedDir).filter((f) => f.startsWith('expected'));
          expect(expectedFiles.length).toBeGreaterThan(0);
          const expectations = expectedFiles.map((f) => canonicalConfig(onCpuHost(parseModelConfigText(readFileSync(path.join(expectedDir, f), 'utf8')))));
          const got = canonicalConfig(await client.getModelConfig(c.modelName));
          expect(expectations.includes(got) ? got : { got, expected: expectations[0] }).toBe(got);
        } finally {
          client.close();
        }
        expect(errorLines(serve.log())).toEqual([]);
      } finally {
        await serve.stop();
      }
    }, 120_000);
  }
});
