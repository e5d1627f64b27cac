/**
 * The commit-msg hook (.githooks/commit-msg, installed by `npm run hooks`): run as git runs it, on
 * message files, and inside a throwaway repository whose core.hooksPath points at it, so a refused
 * message is a commit that does not happen.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const HOOKS = path.join(ROOT, '.githooks');
const work = mkdtempSync(path.join(tmpdir(), 'tritium-commit-msg-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** Runs the hook on `message`; its exit status and what it printed. */
function hook(message: string): { status: number | null; stderr: string } {
  const file = path.join(work, `msg-${n++}`);
  writeFileSync(file, message);
  const run = spawnSync('sh', [path.join(HOOKS, 'commit-msg'), file], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

describe('commit-msg hook', () => {
  it.each([
    ['a subject alone', 'core: one schema for ModelConfig\n'],
    ['a subject, a blank line, a body', 'core: one schema\n\nThe detail, as long as it needs.\nMore lines.\n'],
    ['exactly 72 characters', `${'a'.repeat(72)}\n`],
    ['72 characters that are not ASCII', `${'→'.repeat(72)}\n\nbody\n`],
    ["git's comment lines and its verbose diff", '# Please enter the commit message\nfix: x\n\n# On branch main\n# ------------------------ >8 ------------------------\ndiff --git a b\n'],
    ['leading blank lines (git strips them)', '\n\nsubject\n\nbody\n'],
  ])('accepts %s', (_what, message) => {
    expect(hook(message)).toEqual({ status: 0, stderr: '' });
  });

  it('refuses a subject of 73 characters, naming its length', () => {
    const result = hook(`${'a'.repeat(73)}\n\nbody\n`);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('the subject is 73 characters, over 72');
  });

  it('refuses a body that starts on the line after the subject', () => {
    const result = hook('subject\nbody without the blank line\n');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('the subject must be followed by a blank line before the body');
  });

  it('refuses a paragraph-long subject (both problems named)', () => {
    const result = hook(`${'word '.repeat(30)}\ncontinued on the next line\n`);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('the subject is 149 characters, over 72');
    expect(result.stderr).toContain('blank line before the body');
  });

  it('keeps a bad message from being committed once installed as `npm run hooks` installs it', () => {
    const repo = path.join(work, 'repo');
    const git = (...args: string[]) => spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
    execFileSync('git', ['init', '-q', repo]);
    const script = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.hooks as string;
    expect(script).toBe('git config core.hooksPath .githooks');
    expect(git('config', 'core.hooksPath', HOOKS).status).toBe(0);
    for (const [k, v] of [['user.name', 'T'], ['user.email', 't@example.com'], ['commit.gpgsign', 'false']]) git('config', k!, v!);

    const refused = git('commit', '-q', '--allow-empty', '-m', `${'x'.repeat(80)}`);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('the subject is 80 characters, over 72');
    expect(git('rev-parse', '--verify', '-q', 'HEAD').status).not.toBe(0);

    expect(git('commit', '-q', '--allow-empty', '-m', 'a short subject', '-m', 'and a body').status).toBe(0);
    expect(git('log', '--format=%s').stdout.trim()).toBe('a short subject');
  });
});
