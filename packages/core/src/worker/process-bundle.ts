/**
 * Process isolation runs without tsx: under Node's permission model its loader-hook thread is a
 * worker, which the child may not start. So the host transpiles up front with esbuild into a temp
 * folder the child may read: one bundle of the worker runtime and one of the entry. TypeScript
 * (workspace sources) is bundled in; plain-JS packages stay external, imported by absolute path so
 * they resolve without node_modules next to the bundle (native addons keep working).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { builtinModules, createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface ProcessBundle {
  readonly dir: string;
  readonly runtime: URL;
  readonly entry: URL;
  remove(): Promise<void>;
}

const TS = /\.[cm]?tsx?$/;

/** esbuild plugin: bare imports that resolve to JavaScript become external absolute file URLs. */
function externalizeJs(): import('esbuild').Plugin {
  return {
    name: 'tritium-externalize-js',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        if (args.path.startsWith('node:') || builtinModules.includes(args.path.split('/')[0]!)) return { path: args.path, external: true };
        let resolved: string;
        try {
          resolved = fileURLToPath(import.meta.resolve(args.path, pathToFileURL(args.importer || args.resolveDir + '/').href));
        } catch {
          try {
            resolved = createRequire(args.importer || join(args.resolveDir, 'x.js')).resolve(args.path);
          } catch {
            return undefined; // let esbuild report it
          }
        }
        if (TS.test(resolved)) return { path: resolved };
        return { path: pathToFileURL(resolved).href, external: true };
      });
    },
  };
}

/**
 * Bundles one ESM module for a process-isolated worker (no tsx there): TypeScript it reaches is
 * bundled in; bare imports that resolve to JavaScript stay external as absolute file URLs, so the
 * output runs from any folder the child may read. Backends use it for code the entry loads at run
 * time (e.g. a transpiled user model that imports a TypeScript author API).
 */
export async function bundleForProcessIsolation(entryFile: string, outfile: string): Promise<void> {
  return bundle(entryFile, outfile);
}

async function bundle(entryFile: string, outfile: string): Promise<void> {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [entryFile],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    sourcemap: 'inline',
    plugins: [externalizeJs()],
    // Some bundled CJS reaches for require(); give ESM output one.
    banner: { js: "import { createRequire as __trCreateRequire } from 'node:module'; const require = __trCreateRequire(import.meta.url);" },
  });
}

/** Builds the runtime and the entry into a fresh temp folder. */
export async function buildProcessBundle(entryUrl: string): Promise<ProcessBundle> {
  const dir = await mkdtemp(join(tmpdir(), 'tritium-worker-'));
  const runtime = join(dir, 'runtime.mjs');
  const entry = join(dir, 'entry.mjs');
  const entryFile = fileURLToPath(entryUrl);
  await Promise.all([bundle(fileURLToPath(new URL('./worker-runtime.ts', import.meta.url)), runtime), bundle(entryFile, entry)]);
  return {
    dir,
    runtime: pathToFileURL(runtime),
    entry: pathToFileURL(entry),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The folder of the original entry (the model's own folder a process-isolated instance may read). */
export function entryDir(entryUrl: string): string {
  return dirname(fileURLToPath(entryUrl));
}
