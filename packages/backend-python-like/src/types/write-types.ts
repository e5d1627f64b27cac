/**
 * Writes what `tritium types` generates: `model-types.d.ts` and `model-types.js` beside each
 * TypeScript model file of a model, and a `tsconfig.json`. A file that exists and was not written
 * by `tritium types` (its first line) is left alone.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ModelConfig } from '@tritium/core';
import { MODEL_FILENAMES } from '../locate-model.ts';
import { tsconfigText } from './compiler-options.ts';
import { GENERATED_MARKER, generateModelTypes, isGenerated, MODEL_TYPES_BASENAME } from './model-types.ts';

export interface WrittenFile {
  readonly file: string;
  /** `written`, `unchanged`, or `kept`: it exists and is not ours. */
  readonly status: 'written' | 'unchanged' | 'kept';
}

async function writeIfOurs(file: string, text: string): Promise<WrittenFile> {
  const existing = await readFile(file, 'utf8').catch(() => undefined);
  if (existing !== undefined && !isGenerated(existing)) return { file, status: 'kept' };
  if (existing === text) return { file, status: 'unchanged' };
  await writeFile(file, text);
  return { file, status: 'written' };
}

/** Version folders of `modelDir` that hold a TypeScript model file (`model.ts`, `model.mts`, or the config's `default_model_filename`). */
async function typescriptVersionDirs(modelDir: string, config: ModelConfig): Promise<string[]> {
  const names = new Set([config.default_model_filename, config.runtime, ...MODEL_FILENAMES].filter((n) => n && /\.[cm]?ts$/.test(n)));
  const entries = await readdir(modelDir, { withFileTypes: true }).catch(() => []);
  const dirs: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || !/^\d+$/.test(e.name)) continue;
    const files = await readdir(path.join(modelDir, e.name)).catch(() => [] as string[]);
    if (files.some((f) => names.has(f))) dirs.push(path.join(modelDir, e.name));
  }
  return dirs.sort();
}

/** The generated types of one model, beside each of its TypeScript model files. */
export async function writeModelTypes(modelDir: string, config: ModelConfig): Promise<WrittenFile[]> {
  const { declarations, javascript } = generateModelTypes(config);
  const written: WrittenFile[] = [];
  for (const dir of await typescriptVersionDirs(modelDir, config)) {
    written.push(await writeIfOurs(path.join(dir, `${MODEL_TYPES_BASENAME}.d.ts`), declarations));
    written.push(await writeIfOurs(path.join(dir, `${MODEL_TYPES_BASENAME}.js`), javascript));
  }
  return written;
}

/** `<dir>/tsconfig.json` with the server's compiler options (see compiler-options.ts). */
export async function writeTsconfig(dir: string): Promise<WrittenFile> {
  return writeIfOurs(path.join(dir, 'tsconfig.json'), tsconfigText(GENERATED_MARKER));
}
