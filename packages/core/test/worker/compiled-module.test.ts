/**
 * Workers run compiled JavaScript only: compiledModule maps a source name to the file a worker runs
 * (beside it in dist/, or its twin under the project's dist/), and refuses TypeScript with no
 * compiled file. Real files in a temp project; plus the host refusing such an entry.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compiledModule } from '../../src/worker/compiled-module.ts';
import { dedupeReadPaths } from '../../src/worker/process-paths.ts';
import { spawnWorkerInstance } from '../../src/worker/worker-host.ts';
import { TEST_ENTRIES } from '../../src/testing/index.ts';

const root = mkdtempSync(join(tmpdir(), 'tritium-compiled-'));
const file = (rel: string, text = ''): string => {
  const path = join(root, rel);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
};
file('proj/tsconfig.json', '{}');
file('proj/src/worker/entry.ts');
file('proj/dist/worker/entry.js');
file('proj/src/lonely.ts');
file('bench/tsconfig.json', '{}');
file('bench/tight.entry.ts');
file('bench/dist/tight.entry.js');
file('plain/entry.mjs');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const url = (rel: string): URL => pathToFileURL(join(root, rel));

describe('compiledModule', () => {
  it('maps a source under src/ to its twin under dist/', () => {
    expect(compiledModule(url('proj/src/worker/entry.ts')).href).toBe(url('proj/dist/worker/entry.js').href);
  });

  it('maps a source name written beside compiled code to the .js beside it', () => {
    expect(compiledModule(url('proj/dist/worker/entry.ts')).href).toBe(url('proj/dist/worker/entry.js').href);
  });

  it('maps a project without src/ (bench) to its own dist/', () => {
    expect(compiledModule(url('bench/tight.entry.ts')).href).toBe(url('bench/dist/tight.entry.js').href);
  });

  it('keeps JavaScript as it is', () => {
    expect(compiledModule(url('plain/entry.mjs')).href).toBe(url('plain/entry.mjs').href);
    expect(compiledModule(url('plain/entry.mjs').href).href).toBe(url('plain/entry.mjs').href);
  });

  it('refuses TypeScript with no compiled file, naming both files', () => {
    expect(() => compiledModule(url('proj/src/lonely.ts'))).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARG',
        message: `'${join(root, 'proj/src/lonely.ts')}' is TypeScript and has no compiled JavaScript at '${join(root, 'proj/dist/lonely.js')}': workers run compiled code only (build with \`npx tsc -b\`)`,
      }),
    );
  });

  it("finds core's own test entries compiled (tests run after tsc -b)", () => {
    expect(compiledModule(TEST_ENTRIES.identity).pathname).toMatch(/\/packages\/core\/dist\/testing\/entries\/identity\.js$/);
  });
});

describe('worker host: entries', () => {
  it('fails INVALID_ARG for an entry with no compiled file, before starting a worker', async () => {
    await expect(spawnWorkerInstance({ entry: url('proj/src/lonely.ts'), init: null, model: 'm', instanceName: 'm_0_0' })).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/^model 'm' instance 'm_0_0': worker entry: '.*lonely\.ts' is TypeScript and has no compiled JavaScript/),
    });
  });
});

describe('dedupeReadPaths', () => {
  it('drops duplicates and paths inside another granted folder (Node 20 aborts on a path granted twice)', () => {
    expect(dedupeReadPaths(['/a/node_modules', '/a/node_modules/', '/a/node_modules/@t/core', '/b/pkg', '/a/node_modules-x', '/b/pkg/dist/x.js'])).toEqual([
      '/b/pkg',
      '/a/node_modules',
      '/a/node_modules-x',
    ]);
  });
});
