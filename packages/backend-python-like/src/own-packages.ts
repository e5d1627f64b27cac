/**
 * A model folder may carry its own `package.json`: then its bare imports resolve from its own
 * `node_modules` only, never from the server's packages (see the README's "Per-model dependencies").
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';

/** `<modelDir>/package.json` when the model carries one (a regular file), else undefined. */
export async function ownPackageFile(modelDir: string): Promise<string | undefined> {
  const file = path.join(path.resolve(modelDir), 'package.json');
  const st = await stat(file).catch(() => undefined);
  return st?.isFile() ? file : undefined;
}
