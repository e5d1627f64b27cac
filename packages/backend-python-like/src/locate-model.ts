import { access } from 'node:fs/promises';
import path from 'node:path';
import { InferError, type ModelConfig } from '@tritium/core';

/** File names a version folder may hold, in the order they are tried. */
export const MODEL_FILENAMES = ['model.ts', 'model.mts', 'model.js', 'model.mjs'] as const;

const RUNNABLE = /\.(ts|mts|js|mjs)$/;

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the model file of a version folder: `runtime` or `default_model_filename` when they name a
 * TypeScript/JavaScript file, else `model.ts` / `model.mts` / `model.js` / `model.mjs`. A folder with only a
 * `model.py` fails with a message saying to write `model.ts`.
 */
export async function locateModelFile(config: Pick<ModelConfig, 'name' | 'runtime' | 'default_model_filename'>, versionDir: string): Promise<string> {
  const named = [config.runtime, config.default_model_filename].filter((f) => f && RUNNABLE.test(f));
  for (const name of [...named, ...MODEL_FILENAMES]) {
    const file = path.resolve(versionDir, name);
    if (await exists(file)) return file;
  }
  for (const name of named) {
    throw new InferError('NOT_FOUND', `model '${config.name}': '${name}' named by the config not found in ${versionDir}`);
  }
  const pyName = [config.runtime, config.default_model_filename].find((f) => f && f.endsWith('.py')) || 'model.py';
  if (await exists(path.join(versionDir, pyName))) {
    throw new InferError(
      'INVALID_ARG',
      `model '${config.name}': ${pyName} found but Tritium runs TypeScript models: write ${path.join(versionDir, 'model.ts')} ` +
        `exporting class TritonPythonModel (see packages/backend-python-like/README.md; the API mirrors triton_python_backend_utils)`,
    );
  }
  throw new InferError(
    'NOT_FOUND',
    `model '${config.name}': no model file in ${versionDir} (expected one of ${MODEL_FILENAMES.join(', ')})`,
  );
}
