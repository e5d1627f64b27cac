/**
 * Every client example of the READMEs runs against what the repository ships, and prints what its
 * comments say: the TypeScript blocks that import `@tritium/client` or `openai` (root README, client README),
 * the root README's curl call and, where `tritonclient` is installed, its Python client. One
 * `tritium serve` process serves the example pipeline (model_repository/) and
 * examples/model_repository (`simple`, `repeat`), as the client README tells users to.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REPOSITORY, setupExample, startTritium, type ServeProcess } from '../src/index.ts';
import { codeBlocks, compareNumbers, type CodeBlock } from './readme-blocks.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const READMES = ['README.md', 'packages/client/README.md', 'packages/backend-examples/README.md'].map((r) => path.join(ROOT, r));
const WORK = path.join(ROOT, 'tmp', `readme-examples-${process.pid}`);

const blocks = READMES.flatMap(codeBlocks);
/** TypeScript blocks that call the server: with `@tritium/client`, or OpenAI's SDK on the OpenAI routes. */
const clientBlocks = blocks.filter((b) => /^(ts|typescript)$/.test(b.lang) && (b.code.includes("from '@tritium/client'") || b.code.includes("from 'openai'")));
const label = (b: CodeBlock): string => `${path.relative(ROOT, b.readme)}:${b.line}`;

/** Points the block's addresses at the test server. */
function retarget(code: string, server: ServeProcess): string {
  return code
    .replace(/(localhost|127\.0\.0\.1):8000/g, server.httpUrl)
    .replace(/(localhost|127\.0\.0\.1):8001/g, server.grpcUrl);
}

/** What `console.log` would show, with typed arrays as plain lists (so numbers can be compared). */
function show(values: unknown[]): string {
  return values
    .map((v) => (ArrayBuffer.isView(v) && !(v instanceof DataView) ? `[${Array.from(v as unknown as ArrayLike<unknown>).join(', ')}]` : typeof v === 'string' ? v : JSON.stringify(v)))
    .join(' ');
}

describe('README examples against a served repository', () => {
  let server: ServeProcess;
  beforeAll(async () => {
    setupExample();
    server = await startTritium(DEFAULT_REPOSITORY, { args: ['--model-repository', path.join(ROOT, 'examples/model_repository')] });
    mkdirSync(WORK, { recursive: true });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(WORK, { recursive: true, force: true });
  });

  it('finds the client examples (a README losing its examples fails here)', () => {
    expect(clientBlocks.map(label).length).toBeGreaterThanOrEqual(3);
    expect(clientBlocks.some((b) => b.code.includes("'simple'"))).toBe(true);
    expect(clientBlocks.some((b) => b.code.includes("'repeat'"))).toBe(true);
    expect(clientBlocks.some((b) => b.code.includes("'embedding_ensemble'"))).toBe(true);
  });

  it.each(clientBlocks.map((b) => [label(b), b] as const))('%s runs and prints what its comments say', async (_where, block) => {
    // Each console.log with a trailing comment holding numbers reports to the check, tagged by line.
    const lines = retarget(block.code, server).split('\n');
    const expectations = new Map<number, string>();
    const code = lines
      .map((line, i) => {
        const m = /^(\s*)console\.log\((.*)\);\s*\/\/\s*(.*\d.*)$/.exec(line);
        if (!m) return line;
        expectations.set(i, m[3]!);
        return `${m[1]}(globalThis as any).__readme(${i}, ${m[2]});`;
      })
      .join('\n');
    const printed = new Map<number, string>();
    (globalThis as { __readme?: unknown }).__readme = (line: number, ...values: unknown[]) => printed.set(line, show(values));
    const file = path.join(WORK, `${path.basename(path.dirname(block.readme))}-${block.line}.ts`);
    writeFileSync(file, `${code}\nexport {};\n`);
    await import(pathToFileURL(file).href);
    expect(expectations.size).toBeGreaterThan(0);
    for (const [i, expected] of expectations) {
      expect(printed.has(i), `line ${block.line + i} never printed`).toBe(true);
      expect(compareNumbers(expected, printed.get(i)!), `${label(block)} line ${block.line + i}`).toBeUndefined();
    }
  });

  it("the root README's curl call answers what it shows", (ctx) => {
    const curlBlock = blocks.find((b) => b.readme.endsWith(`${path.sep}README.md`) && b.code.trimStart().startsWith('curl'));
    expect(curlBlock).toBeDefined();
    if (spawnSync('curl', ['--version']).status !== 0) {
      console.warn('skipped: curl is not installed');
      return ctx.skip();
    }
    const commandLines = curlBlock!.code.split('\n').filter((l) => !l.startsWith('#'));
    const expected = curlBlock!.code.split('\n').filter((l) => l.startsWith('#')).map((l) => l.slice(1)).join('');
    const out = execFileSync('bash', ['-c', retarget(commandLines.join('\n'), server)], { encoding: 'utf8' });
    expect(compareNumbers(expected, out)).toBeUndefined();
  });

  it("the root README's Python client (tritonclient) prints what it shows", (ctx) => {
    const py = blocks.find((b) => b.lang === 'python' && b.code.includes('tritonclient'));
    expect(py).toBeDefined();
    const probe = spawnSync('python3', ['-c', 'import tritonclient.http, numpy'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      console.warn(`skipped: python3 with tritonclient[http] and numpy is not installed (${(probe.stderr || String(probe.error)).trim().split('\n').pop()})`);
      return ctx.skip();
    }
    const out = execFileSync('python3', ['-c', retarget(py!.code, server)], { encoding: 'utf8' }).trim().split('\n');
    const promised = py!.code.split('\n').filter((l) => /^print\(.*#/.test(l)).map((l) => l.slice(l.indexOf('#') + 1));
    expect(out.length).toBe(promised.length);
    promised.forEach((expected, i) => expect(compareNumbers(expected, out[i]!)).toBeUndefined());
  });
});

/**
 * The keywords tritonclient.http's calls take (triton-inference-server/client,
 * src/python/library/tritonclient/http/_client.py, _infer_input.py, _requested_output.py).
 */
const TRITONCLIENT_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  InferenceServerClient: ['url', 'verbose', 'concurrency', 'connection_timeout', 'network_timeout', 'max_greenlets', 'ssl', 'ssl_options', 'ssl_context_factory', 'insecure'],
  InferInput: ['name', 'shape', 'datatype'],
  set_data_from_numpy: ['input_tensor', 'binary_data'],
  InferRequestedOutput: ['name', 'binary_data', 'class_count'],
  infer: [
    'model_name', 'inputs', 'model_version', 'outputs', 'request_id', 'sequence_id', 'sequence_start', 'sequence_end', 'priority', 'timeout',
    'headers', 'query_params', 'request_compression_algorithm', 'response_compression_algorithm', 'parameters',
  ],
};

/** `[call, keyword]` for every keyword argument passed to one of the calls above. */
function keywordArguments(code: string): [string, string][] {
  const out: [string, string][] = [];
  for (const call of Object.keys(TRITONCLIENT_KEYWORDS)) {
    for (const m of code.matchAll(new RegExp(`\\b${call}\\(`, 'g'))) {
      let depth = 1;
      let i = m.index! + m[0].length;
      const start = i;
      for (; i < code.length && depth > 0; i++) depth += code[i] === '(' ? 1 : code[i] === ')' ? -1 : 0;
      for (const k of code.slice(start, i - 1).matchAll(/(?<![=!<>])\b([a-z_]+)\s*=(?!=)/g)) out.push([call, k[1]!]);
    }
  }
  return out;
}

describe("the root README's Python client, checked against tritonclient's signatures", () => {
  it('passes only keywords tritonclient takes (the seed passed binary_format=, which no release has)', () => {
    const py = blocks.find((b) => b.lang === 'python' && b.code.includes('tritonclient'))!;
    const used = keywordArguments(py.code);
    expect(used).toContainEqual(['set_data_from_numpy', 'binary_data']);
    expect(used).toContainEqual(['InferRequestedOutput', 'binary_data']);
    for (const [call, keyword] of used) expect(TRITONCLIENT_KEYWORDS[call], `${call}(${keyword}=...)`).toContain(keyword);
    // The check would catch the seed's call.
    expect(keywordArguments('x.set_data_from_numpy(t, binary_format=True)')).toEqual([['set_data_from_numpy', 'binary_format']]);
  });
});

describe('the README number check', () => {
  it('accepts values equal to the shown precision, elisions included, and refuses others', () => {
    expect(compareNumbers('[-2.72, 2.72]', '[-2.7206, 2.7201]')).toBeUndefined();
    expect(compareNumbers('[-2.72, 2.72]', '[-2.7306, 2.7201]')).toMatch(/expected/);
    expect(compareNumbers('[1, 2, ..., 16]', '[1, 2, 3, 4, 16]')).toBeUndefined();
    expect(compareNumbers('[1, 2, ..., 16]', '[1, 2, 3, 4, 15]')).toMatch(/expected/);
    expect(compareNumbers('[4, 2, 0, 1]', '[4, 2, 0]')).toMatch(/expected 4 numbers/);
  });
});
