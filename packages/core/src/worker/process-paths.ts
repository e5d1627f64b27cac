/**
 * What a child process under the permission model must be able to read besides its bundles and its
 * model folder: the node_modules folders its external imports resolve into.
 */
import { fileURLToPath } from 'node:url';
import { dirname, sep } from 'node:path';
import { realpathSync } from 'node:fs';

let cached: string[] | undefined;

/** Folders ending in `node_modules` above `file`, nearest first. */
function nodeModulesAbove(file: string): string[] {
  const out: string[] = [];
  let dir = dirname(file);
  for (;;) {
    const idx = dir.lastIndexOf(`${sep}node_modules`);
    if (idx < 0) break;
    out.push(dir.slice(0, idx + `${sep}node_modules`.length));
    dir = dir.slice(0, idx);
  }
  return out;
}

export function runtimeReadPaths(): string[] {
  if (cached) return cached;
  // The bundles import plain-JS packages by absolute path from wherever tsx (and so the workspace's
  // packages) are installed.
  const tsxEntry = realpathSync(fileURLToPath(import.meta.resolve('tsx/esm/api')));
  cached = nodeModulesAbove(tsxEntry);
  return cached;
}
