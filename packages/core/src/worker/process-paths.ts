/**
 * What a child process under the permission model must be able to read to run compiled code: the
 * package folder of each module it starts from (its compiled files and the package.json that says
 * they are ES modules), and the node_modules folders Node searches from there for bare imports
 * (`@tritium/core`, onnxruntime-node, ...). In a workspace those packages are symlinks to folders
 * outside node_modules, so the real package folder is granted too.
 */
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRoot(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(file);
  }
}

/** Folders a child needs to load `moduleUrl` (a compiled file) and what it imports. */
export function readPathsFor(moduleUrl: URL): string[] {
  const file = realpathSync(fileURLToPath(moduleUrl));
  const searched = createRequire(file).resolve.paths('x') ?? [];
  return [packageRoot(file), ...searched.filter((dir) => existsSync(dir))];
}

/**
 * One list with no duplicates and no folder inside another granted folder: Node 20 aborts on a path
 * granted twice.
 */
export function dedupeReadPaths(paths: Iterable<string>): string[] {
  const norm = [...new Set([...paths].map((p) => p.replace(/[/\\]+$/, '') || sep))].sort((a, b) => a.length - b.length);
  const out: string[] = [];
  for (const p of norm) {
    if (!out.some((q) => p === q || p.startsWith(q.endsWith(sep) ? q : q + sep))) out.push(p);
  }
  return out;
}
