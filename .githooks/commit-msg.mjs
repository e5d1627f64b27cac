#!/usr/bin/env node
// The commit message rule: a subject of one line, at most 72 characters, saying what changed; the
// detail (repro, Triton's behaviour, figures, the test) in a body separated from it by a blank line,
// so `git log --oneline` stays readable. Run by git as the commit-msg hook (`npm run hooks` sets
// core.hooksPath to this folder); `node .githooks/commit-msg.mjs <file>` checks any message file.
// Lines git strips before committing (comments, everything below the scissors line) are ignored.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_SUBJECT = 72;

/** The problems of a commit message as git would record it (`comment`: git's core.commentChar). */
export function commitMessageProblems(text, comment = '#') {
  const lines = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === `${comment} ------------------------ >8 ------------------------`) break;
    if (!line.startsWith(comment)) lines.push(line);
  }
  const blank = (line) => line.trim() === '';
  const first = lines.findIndex((line) => !blank(line));
  if (first === -1) return []; // an empty message: git refuses it itself
  const problems = [];
  const subject = lines[first].trimEnd();
  const length = [...subject].length;
  if (length > MAX_SUBJECT) problems.push(`the subject is ${length} characters, over ${MAX_SUBJECT}: ${subject}`);
  if (first + 1 < lines.length && !blank(lines[first + 1])) {
    problems.push('the subject must be followed by a blank line before the body');
  }
  return problems;
}

function commentChar() {
  try {
    const value = execFileSync('git', ['config', '--get', 'core.commentChar'], { encoding: 'utf8' }).trim();
    return value === '' || value === 'auto' ? '#' : value;
  } catch {
    return '#';
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: commit-msg.mjs <commit message file>\n');
    process.exit(2);
  }
  const problems = commitMessageProblems(readFileSync(file, 'utf8'), commentChar());
  for (const p of problems) process.stderr.write(`commit-msg: ${p}\n`);
  if (problems.length > 0) {
    process.stderr.write('commit-msg: keep the subject to one line saying what changed; put the detail in the body.\n');
    process.exit(1);
  }
}
