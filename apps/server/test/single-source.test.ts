/**
 * One source of truth per rule: request validation, the ensemble's config rules and the model
 * version grammar live in core only (backends and transports call it), and the datatype tables
 * (typed array, element size) are written only by tools/codegen, into core and into the client (which
 * imports no internal package).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ELEMENT_SIZE, TYPED_ARRAYS } from '@tritium/client';
import { DATA_TYPES } from '@tritium/core';
import { DATA_TYPE_SIZE, TYPED_ARRAY_CONSTRUCTORS } from '@tritium/core/tensor';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every TypeScript source file of the workspace's packages, apps and tools (tests excluded). */
function sources(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'test' || name === 'dist') continue;
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.set(path.relative(ROOT, p), readFileSync(p, 'utf8'));
    }
  };
  for (const group of ['packages', 'apps', 'tools']) {
    for (const project of readdirSync(path.join(ROOT, group), { withFileTypes: true })) {
      const src = path.join(ROOT, group, project.name, 'src');
      if (project.isDirectory() && statSync(src, { throwIfNoEntry: false })?.isDirectory()) walk(src);
    }
  }
  return out;
}

const files = sources();
const holding = (pattern: RegExp): string[] => [...files].filter(([, text]) => pattern.test(text)).map(([file]) => file).sort();

describe('one source of truth', () => {
  it('finds the workspace sources', () => {
    expect(files.size).toBeGreaterThan(100);
  });

  it.each([
    ['request validation', /unexpected shape for input '/, ['packages/core/src/server/request-validation.ts']],
    ['request input count', /but missing required input\(s\)/, ['packages/core/src/server/request-validation.ts']],
    ['ensemble data flow', /can appear in an output map only once/, ['packages/core/src/config/validate-ensemble.ts']],
    ['ensemble step fields', /must specify 'input_map'/, ['packages/core/src/config/validate-ensemble.ts']],
    ['model version grammar', /failed to parse model version/, ['packages/core/src/server/model-version.ts']],
  ])('%s has one implementation', (_rule, pattern, expected) => {
    expect(holding(pattern)).toEqual(expected);
  });

  it('keeps the datatype tables (typed array, element size) in the files tools/codegen generates only', () => {
    for (const row of [/^\s*UINT64: BigUint64Array,$/m, /^\s*FP64: Float64Array,$/m, /\bUINT16: 2\b/]) {
      expect(holding(row)).toEqual(['packages/client/src/generated/data-types.ts', 'packages/core/src/tensor/generated/data-types.ts']);
    }
    expect(holding(/\bwire: 'BYTES', size: 0\b/)).toEqual(['tools/codegen/src/data-types.ts']);
    for (const datatype of DATA_TYPES) {
      expect([datatype, TYPED_ARRAYS[datatype], ELEMENT_SIZE[datatype]]).toEqual([datatype, TYPED_ARRAY_CONSTRUCTORS[datatype], DATA_TYPE_SIZE[datatype]]);
    }
    expect(Object.keys(TYPED_ARRAYS).sort()).toEqual([...DATA_TYPES].sort());
  });
});
