/**
 * Pre-bundled worker code, for where tsx cannot or should not run: process isolation (under Node's
 * permission model tsx's loader-hook thread is a worker, which the child may not start) and, opt-in,
 * threads (`loader: 'bundle'`: no tsx hooks thread per worker, so workers start faster). esbuild
 * builds ONE module from the worker runtime and the entry (so they share one copy of core's
 * modules) into a temp folder: TypeScript is bundled in (so `import.meta.url` in it names the
 * bundle: pass paths in `init` instead); plain-JS packages stay external, imported by absolute path
 * so they resolve without node_modules next to the bundle (native addons keep working).
 * Bundles are cached per entry for the life of the process and removed when it exits.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { builtinModules, createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLED_ENTRY_KEY } from './protocol.ts';


export interface WorkerBundle {
  /** Folder holding the bundle (a process-isolated child must be allowed to read it). */
  readonly dir: string;
  /** The module to start the worker / child with. */
  readonly script: URL;
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
          // Resolve from the importing file (nested node_modules); ESM-only packages fall through.
          resolved = createRequire(args.importer || join(args.resolveDir, 'x.js')).resolve(args.path);
        } catch {
          try {
            resolved = fileURLToPath(import.meta.resolve(args.path));
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
 * Bundles one ESM module for a worker without tsx: TypeScript it reaches is bundled in; bare
 * imports that resolve to JavaScript stay external as absolute file URLs, so the output runs from
 * any folder. Backends use it for code the entry loads at run time (e.g. a transpiled user model
 * that imports a TypeScript author API) under process isolation.
 */
export async function bundleForProcessIsolation(entryFile: string, outfile: string): Promise<void> {
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

let root: string | undefined;
const cache = new Map<string, Promise<WorkerBundle>>();

function bundleRoot(): string {
  if (!root) {
    root = mkdtempSync(join(tmpdir(), 'tritium-worker-'));
    const dir = root;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return root;
}

/** Builds (once per entry and process) the runtime + entry bundle a worker starts from. */
export function workerBundle(entryUrl: string): Promise<WorkerBundle> {
  let built = cache.get(entryUrl);
  if (!built) {
    built = (async () => {
      const dir = mkdtempSync(join(bundleRoot(), 'b-'));
      const stub = join(dir, 'stub.ts');
      const runtime = fileURLToPath(new URL('./worker-runtime.ts', import.meta.url));
      // The entry is evaluated first; the runtime picks its exports up from the global when `init` comes.
      writeFileSync(
        stub,
        `import * as entry from ${JSON.stringify(fileURLToPath(entryUrl))};\n` +
          `(globalThis as any)[Symbol.for(${JSON.stringify(BUNDLED_ENTRY_KEY)})] = entry;\n` +
          `import ${JSON.stringify(runtime)};\n`,
      );
      const script = join(dir, 'worker.mjs');
      await bundleForProcessIsolation(stub, script);
      return { dir, script: pathToFileURL(script) };
    })();
    cache.set(entryUrl, built);
    built.catch(() => cache.delete(entryUrl));
  }
  return built;
}

/** The folder of the original entry (the model's own folder a process-isolated instance may read). */
export function entryDir(entryUrl: string): string {
  return dirname(fileURLToPath(entryUrl));
}
