/** `npm run bench` writes tracked docs/ only with --write-docs; its default folder is git-ignored. */
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { reportDir } from './pipeline/report-dir.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

it('writes docs/ only when asked', () => {
  expect(reportDir(['--write-docs'], REPO)).toBe(join(REPO, 'docs'));
  expect(reportDir([], REPO)).toBe(join(REPO, 'tmp', 'bench-report'));
});

it('keeps a default run out of git: its folder is ignored', () => {
  const file = join(reportDir([], REPO), 'benchmarks.md');
  expect(execFileSync('git', ['check-ignore', file], { cwd: REPO, encoding: 'utf8' }).trim()).toBe(file);
});

it('refuses an unknown option instead of silently not writing docs/', () => {
  expect(() => reportDir(['--write-doc'], REPO)).toThrow("unknown option '--write-doc' (valid: --write-docs)");
});
