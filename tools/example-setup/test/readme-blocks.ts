/**
 * README code blocks as tests: find the fenced blocks of a README, and check printed values
 * against the values a block's comments promise (`console.log(x); // [1, 2, ..., 16]`).
 */
import { readFileSync } from 'node:fs';

export interface CodeBlock {
  readonly readme: string;
  readonly lang: string;
  /** 1-based line of the block's first code line in the README. */
  readonly line: number;
  readonly code: string;
}

/** Every fenced block (```lang ... ```) of a Markdown file. */
export function codeBlocks(readme: string): CodeBlock[] {
  const lines = readFileSync(readme, 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    blocks.push({ readme, lang: open[1]!, line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Numbers written in a text (`-2.72`, `1e-3`, `16`), with how many decimals each shows. */
export function numbersIn(text: string): { value: number; decimals: number }[] {
  return [...text.matchAll(/-?\d+(?:\.(\d+))?(?:e[-+]?\d+)?/gi)].map((m) => ({ value: Number(m[0]), decimals: m[1]?.length ?? 0 }));
}

/**
 * Checks `actual` (what was printed) against `expected` (a comment): the numbers must agree to the
 * precision the comment shows. `...` in the comment elides the middle: the numbers before it must
 * start the actual list, those after it must end it. Returns a description of the first mismatch.
 */
export function compareNumbers(expected: string, actual: string): string | undefined {
  const [head, tail] = expected.includes('...') ? expected.split('...', 2) as [string, string] : [expected, undefined];
  const got = numbersIn(actual).map((n) => n.value);
  const want = numbersIn(head);
  const wantTail = tail === undefined ? [] : numbersIn(tail);
  if (tail === undefined ? got.length !== want.length : got.length < want.length + wantTail.length) {
    return `expected ${tail === undefined ? '' : 'at least '}${want.length + wantTail.length} numbers (${expected.trim()}), got ${got.length}: ${actual}`;
  }
  const pairs: [{ value: number; decimals: number }, number][] = [
    ...want.map((w, i) => [w, got[i]!] as [typeof w, number]),
    ...wantTail.map((w, i) => [w, got[got.length - wantTail.length + i]!] as [typeof w, number]),
  ];
  for (const [w, g] of pairs) {
    const tolerance = Math.max(0.5 * 10 ** -w.decimals, 1e-4) + 1e-9;
    if (!(Math.abs(w.value - g) <= tolerance)) return `expected ${expected.trim()}, got ${actual}`;
  }
  return undefined;
}
