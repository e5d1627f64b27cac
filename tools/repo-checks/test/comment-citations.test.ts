/**
 * Every document a source comment cites is a file of this repository (docs/architecture.md,
 * docs/triton-compatibility.md, a package README), or a public upstream source named by its
 * repository and path. A clone holds nothing beside it, so a comment citing the design notes or
 * the reference pages the project was started from, or the folder they live in beside the
 * repository, points a reader at nothing: this test fails on any such citation in a comment of a
 * tracked source file (the patterns are OUTSIDE below).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Source files whose comments are read, by extension: line comment markers of each language. */
const LINE_COMMENT: Readonly<Record<string, RegExp>> = {
  ts: /\/\/(.*)$/,
  mts: /\/\/(.*)$/,
  js: /\/\/(.*)$/,
  mjs: /\/\/(.*)$/,
  cjs: /\/\/(.*)$/,
  proto: /\/\/(.*)$/,
  c: /\/\/(.*)$/,
  h: /\/\/(.*)$/,
  cc: /\/\/(.*)$/,
  sh: /(?:^|\s)#(.*)$/,
  py: /(?:^|\s)#(.*)$/,
  pbtxt: /(?:^|\s)#(.*)$/,
  yaml: /(?:^|\s)#(.*)$/,
  yml: /(?:^|\s)#(.*)$/,
};
const BLOCK = new Set(['ts', 'mts', 'js', 'mjs', 'cjs', 'proto', 'c', 'h', 'cc']);

/** What counts as citing a document outside the repository. */
const OUTSIDE: readonly [string, RegExp][] = [
  ['the design notes (DESIGN)', /\bDESIGN(?:\.md)?\b/],
  ['a reference page (reference/…, triton.md, peers.md, style-anchors.md)', /\breference\s*(?:\/|§)|\b(?:triton|peers|style-anchors)\.md\b/],
  ['a folder beside the repository (../shared, shared/)', /(?:\.\.\/)+shared\b|(?:^|[\s(`'"])shared\/(?:corpus|seed|reference|DESIGN)/],
  ['a section sign without a repository file', /§/],
];

/** The comment text of each line of `text` (block comments included), for a file with extension `ext`. */
function commentLines(text: string, ext: string): { line: number; comment: string }[] {
  const out: { line: number; comment: string }[] = [];
  const lineRe = LINE_COMMENT[ext];
  if (!lineRe) return out;
  let inBlock = false;
  text.split('\n').forEach((raw, i) => {
    let rest = raw;
    let comment = '';
    if (BLOCK.has(ext)) {
      while (rest.length > 0) {
        if (inBlock) {
          const end = rest.indexOf('*/');
          comment += ` ${end === -1 ? rest : rest.slice(0, end)}`;
          if (end === -1) rest = '';
          else {
            inBlock = false;
            rest = rest.slice(end + 2);
          }
          continue;
        }
        const start = rest.indexOf('/*');
        const line = rest.search(/(?<![:'"`\\])\/\//);
        if (start !== -1 && (line === -1 || start < line)) {
          inBlock = true;
          rest = rest.slice(start + 2);
          continue;
        }
        if (line !== -1) comment += ` ${rest.slice(line + 2)}`;
        rest = '';
      }
    } else {
      const m = lineRe.exec(rest);
      if (m) comment = m[1]!;
    }
    if (comment.trim() !== '') out.push({ line: i + 1, comment });
  });
  return out;
}

/** `file:line: what` for every comment citing a document outside the repository. */
function outsideCitations(file: string, text: string): string[] {
  const ext = file.slice(file.lastIndexOf('.') + 1);
  const found: string[] = [];
  for (const { line, comment } of commentLines(text, ext)) {
    for (const [what, re] of OUTSIDE) {
      if (!re.test(comment)) continue;
      // A section of a file in this repository (`docs/architecture.md §3`) is a citation it can keep.
      if (what.startsWith('a section sign') && /\b(?:docs\/[\w./-]+\.md|README\.md)\s*§/.test(comment)) continue;
      found.push(`${file}:${line}: cites ${what}: ${comment.trim()}`);
    }
  }
  return found;
}

/** This file, whose samples below are outside citations on purpose (in strings the scanner reads as code). */
const SELF = path.relative(ROOT, import.meta.filename);

function trackedSources(): string[] {
  const files = execFileSync('git', ['-C', ROOT, 'ls-files', '-z'], { encoding: 'utf8' }).split('\0');
  return files.filter((f) => f !== '' && f !== SELF && f.slice(f.lastIndexOf('.') + 1) in LINE_COMMENT && !f.startsWith('model_repository/'));
}

describe('source comments cite files of this repository', () => {
  const files = trackedSources();

  it('reads the tracked sources', () => {
    expect(files.length).toBeGreaterThan(500);
  });

  it('no comment cites the design notes, the reference pages or ../shared', () => {
    const found = files.flatMap((f) => outsideCitations(f, readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds each kind of outside citation, and only in comments', () => {
    const sample = [
      "// Lint enforces DESIGN §1's dependency table",
      "/** Triton's dynamic batcher (reference/triton.md §5.1) */",
      "/* Triton's platform names (reference §5.4). */",
      "const L0 = '../shared/corpus'; // the corpus beside the repo (../shared/corpus)",
      '/** perf_analyzer\'s options (peers.md §5.1). */',
      "const design = 'DESIGN'; // a string, not a comment",
      '// pipeline batching (docs/architecture.md §4) is ours',
      "const url = 'https://example.com/x'; // a URL's // is not a comment start",
    ].join('\n');
    expect(outsideCitations('x.ts', sample).map((s) => s.slice(0, s.indexOf(': cites')))).toEqual([
      'x.ts:1',
      'x.ts:1',
      'x.ts:2',
      'x.ts:2',
      'x.ts:3',
      'x.ts:3',
      'x.ts:4',
      'x.ts:5',
      'x.ts:5',
    ]);
    expect(outsideCitations('run.sh', '# see ../shared/seed\necho DESIGN\n')).toEqual(['run.sh:1: cites a folder beside the repository (../shared, shared/): see ../shared/seed']);
  });
});
