/**
 * Workers run compiled JavaScript only: no TypeScript loader exists at run time. Code that names a
 * module to run in a worker writes its source name relative to itself, as imports do:
 * `new URL('./instance-entry.ts', import.meta.url)`. From compiled code that URL names
 * `dist/instance-entry.ts`, beside `dist/instance-entry.js`; from sources (vitest runs the sources,
 * after `tsc -b`) it names `src/instance-entry.ts`, whose compiled twin is `dist/instance-entry.js`.
 * Every project compiles `src/` (or, without one, its own folder, as bench/ does) into `dist/`
 * beside its tsconfig.json, so the project folder is the nearest one holding a tsconfig.json.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InferError } from '../errors.ts';

const TS_EXT = /\.([cm]?)ts$/;

function projectRoot(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'tsconfig.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The JavaScript file a worker runs for `url`: itself when it is JavaScript; for a TypeScript name,
 * the `.js` beside it (compiled code) or its compiled twin under the project's `dist/` (sources).
 * Throws INVALID_ARG naming both files when no compiled file exists (build with `npx tsc -b`).
 */
export function compiledModule(url: string | URL): URL {
  const href = url instanceof URL ? url : new URL(url);
  if (href.protocol !== 'file:') return href;
  const file = fileURLToPath(href);
  const ext = TS_EXT.exec(file);
  if (!ext) return href;
  const jsName = (f: string): string => f.slice(0, -ext[0].length) + `.${ext[1]}js`;
  const beside = jsName(file);
  if (existsSync(beside)) return pathToFileURL(beside);
  const root = projectRoot(file);
  const rel = root ? relative(root, file) : undefined;
  const twin = root && rel ? join(root, 'dist', jsName(rel.startsWith(`src${sep}`) ? rel.slice(4) : rel)) : undefined;
  if (twin && existsSync(twin)) return pathToFileURL(twin);
  throw new InferError(
    'INVALID_ARG',
    `'${file}' is TypeScript and has no compiled JavaScript${twin ? ` at '${twin}'` : ''}: workers run compiled code only (build with \`npx tsc -b\`)`,
  );
}
