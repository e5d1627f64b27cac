import { createHash } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Message, type Plugin } from 'esbuild';
import { InferError } from '@tritium/core';
import { compiledModule, processAlive, restrictToSandbox } from '@tritium/core/worker';

/** The author API module every model imports; always bundled from this package's own copy. */
export const MODEL_API_SPECIFIER = '@tritium/backend-python-like/model';

/** Our compiled modules bundled into every model (found on first use: tests import this file before a build). */
interface OwnFiles {
  readonly modelApi: string;
  readonly runtimeFace: string;
  readonly modelRuntime: string;
  /** Where the server's own packages resolve from (the fallback for models outside the workspace). */
  readonly serverDir: string;
}
let ownFiles: OwnFiles | undefined;

function own(): OwnFiles {
  if (!ownFiles) {
    const file = (source: string): string => realpathSync(fileURLToPath(compiledModule(new URL(source, import.meta.url))));
    const modelApi = file('./model-api/index.ts');
    ownFiles = { modelApi, runtimeFace: file('./model-api/runtime-face.ts'), modelRuntime: file('./worker/model-runtime.ts'), serverDir: path.dirname(modelApi) };
  }
  return ownFiles;
}
const TS_FILE = /\.[cm]?tsx?$/;

export interface TranspiledModel {
  /** Absolute path of the written `.mjs` (inline source map pointing at the model's sources). */
  readonly file: string;
  /** Absolute paths the bare imports resolved to (for process isolation's read allowlist). */
  readonly externals: readonly string[];
  /** Absolute paths of the model's own files bundled in (model.ts and its local imports; not the author API). */
  readonly sources: readonly string[];
}

export interface TranspileOptions {
  /** Where to write the output (default `<tmpdir>/tritium-python-like-<uid>`, see `defaultCacheDir`). */
  readonly cacheDir?: string;
  /** Distinguishes loads of one model (each load gets its own file, so no two share module state). */
  readonly tag: string;
}

const SKIP = Symbol('resolve without the plugin');
const BUILTINS = new Set(builtinModules);

function isBare(spec: string): boolean {
  return !spec.startsWith('.') && !path.isAbsolute(spec) && !/^[a-z][a-z0-9+.-]*:/i.test(spec);
}

/**
 * Resolves bare imports at build time FROM THE MODEL'S FOLDER (Node semantics: its node_modules,
 * then the parents'; failing that, from the server's own packages; a model folder with its own
 * package.json: from its own node_modules only, a missing package refused by name) and leaves JavaScript packages external as
 * absolute file URLs; local files and TypeScript packages (the author API, workspace sources) are
 * bundled. The output can then live anywhere (a cache folder outside the repository, so poll mode
 * never sees it), runs without a TypeScript loader (process isolation), and still imports exactly
 * what the model would.
 */
function externalsPlugin(externals: Set<string>, files: OwnFiles, own: OwnPackages | undefined): Plugin {
  return {
    name: 'tritium-externals',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === SKIP || args.kind === 'entry-point' || !isBare(args.path)) return undefined;
        if (args.path === MODEL_API_SPECIFIER) return { path: files.modelApi };
        if (args.path.startsWith('node:') || BUILTINS.has(args.path) || BUILTINS.has(args.path.split('/')[0]!)) {
          return { path: args.path, external: true };
        }
        let resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: SKIP });
        if (own && insideDir(realpathOrSelf(args.resolveDir), own.realDir)) {
          // The model's imports take its own packages only: never a parent's node_modules, never the server's.
          if (resolved.errors.length > 0 || !insideDir(realpathOrSelf(resolved.path), own.modules)) return { errors: [{ text: notInstalled(args.path, own) }] };
        } else if (resolved.errors.length > 0) {
          // A model outside the workspace may still use the server's own packages.
          const fallback = await b.resolve(args.path, { kind: args.kind, resolveDir: files.serverDir, pluginData: SKIP });
          if (fallback.errors.length > 0) return { errors: resolved.errors };
          resolved = fallback;
        }
        if (TS_FILE.test(resolved.path)) return { path: resolved.path };
        externals.add(resolved.path);
        return { path: pathToFileURL(resolved.path).href, external: true };
      });
    },
  };
}

/** A model folder with its own package.json: its bare imports resolve from its own node_modules only. */
interface OwnPackages {
  readonly dir: string;
  readonly realDir: string;
  /** `<dir>/node_modules`, its real path. */
  readonly modules: string;
}

function ownPackages(modelDir: string): OwnPackages | undefined {
  const file = path.join(modelDir, 'package.json');
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return undefined;
  return { dir: modelDir, realDir: realpathOrSelf(modelDir), modules: realpathOrSelf(path.join(modelDir, 'node_modules')) };
}

function realpathOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

function insideDir(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The refusal of a package the model's own folder does not hold (nothing is fetched at load). */
function notInstalled(specifier: string, own: OwnPackages): string {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  return (
    `package '${name}' is not installed in ${path.join(own.dir, 'node_modules')}: this model has its own package.json, so its ` +
    `packages resolve from its folder only, never the server's; install them there first: npm ci --omit=dev --prefix ${own.dir}`
  );
}

/** What to do about an unresolved import of the generated types (`tritium types` writes them). */
function hint(text: string, workDir: string): string {
  return /^Could not resolve "\.\/model-types(\.js)?"/.test(text) ? ` (generate it: tritium types ${path.dirname(workDir)})` : '';
}

function formatMessage(m: Message, workDir: string): string {
  if (!m.location) return m.text;
  const file = path.resolve(workDir, m.location.file);
  const where = `${file}:${m.location.line}:${m.location.column + 1}: error: ${m.text}${hint(m.text, workDir)}`;
  return m.location.lineText.trim() ? `${where}\n    ${m.location.lineText}` : where;
}

/**
 * Transpiles `model.ts` (and the local files it imports) to one ES module with an inline source
 * map, so stack traces and errors name lines of `model.ts`; it exports `model` (the model's
 * exports), `api` (see `model-api/runtime-face.ts`) and `createModelInstance` (the instance runtime). A syntax or resolution error is an
 * INVALID_ARG naming `file:line:column`.
 */
export async function transpileModel(modelName: string, modelFile: string, options: TranspileOptions): Promise<TranspiledModel> {
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const workDir = path.dirname(modelFile);
  const hash = createHash('sha1').update(modelFile).digest('hex').slice(0, 8);
  const safeName = modelName.replace(/[^A-Za-z0-9_.-]/g, '_');
  const outfile = path.join(cacheDir, `${safeName}-${hash}-${options.tag}.mjs`);
  const externals = new Set<string>();
  const fileUrl = pathToFileURL(modelFile).href;
  let contents: Uint8Array;
  let sources: string[];
  try {
    const files = own();
    const result = await build({
      // One module: the model, the author API's runtime face and the instance runtime (one shared copy).
      stdin: {
        contents: [
          `export * as model from ${JSON.stringify(modelFile)};`,
          `export * as api from ${JSON.stringify(files.runtimeFace)};`,
          `export { createModelInstance } from ${JSON.stringify(files.modelRuntime)};`,
        ].join('\n'),
        resolveDir: workDir,
        sourcefile: '<tritium-model-entry>',
        loader: 'js',
      },
      absWorkingDir: workDir,
      outfile,
      write: false,
      metafile: true,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'inline',
      conditions: ['node'],
      mainFields: ['main', 'module'],
      logLevel: 'silent',
      // The model sees its own location, not the cache file's (e.g. `new URL('./vocab.txt', import.meta.url)`).
      define: {
        'import.meta.url': JSON.stringify(fileUrl),
        'import.meta.filename': JSON.stringify(modelFile),
        'import.meta.dirname': JSON.stringify(workDir),
      },
      plugins: [externalsPlugin(externals, files, ownPackages(path.dirname(workDir)))],
      // Bundled CommonJS reaching for require() gets one.
      banner: {
        js: `import { createRequire as __tritiumCreateRequire } from 'node:module'; const require = __tritiumCreateRequire(${JSON.stringify(modelFile)});`,
      },
    });
    contents = result.outputFiles[0]!.contents;
    // The package's own files (author API, runtime) live beside the model API's folder.
    const ownDir = path.dirname(path.dirname(files.modelApi)) + path.sep;
    sources = Object.keys(result.metafile.inputs)
      .filter((input) => !input.startsWith('<'))
      .map((input) => path.resolve(workDir, input))
      .filter((input) => !input.startsWith(ownDir));
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    const detail = errors && errors.length > 0 ? errors.map((m) => formatMessage(m, workDir)).join('\n') : String(error);
    throw new InferError('INVALID_ARG', `model '${modelName}': failed to compile ${modelFile}:\n${detail}`);
  }
  await ensurePrivateDir(cacheDir);
  // The model's code: readable by the server and its sandbox's user only (core's sandbox-files.ts).
  await writeFile(outfile, contents, { mode: 0o600 });
  await restrictToSandbox(outfile, 'file');
  return { file: outfile, externals: [...externals], sources };
}

/**
 * The bundle folder when none is given: one per user in the temp folder, so no other user can put
 * code there that the server would import (a shared name in /tmp could be created by anyone first).
 */
export function defaultCacheDir(): string {
  return path.join(os.tmpdir(), `tritium-python-like-${process.getuid?.() ?? 'user'}`);
}

/**
 * Creates the bundle folder (traversable, not listable, by others: a sandboxed instance may run as
 * another uid and must read its bundle) and refuses one this process does not own, that others may
 * write, or that is a link: the server imports the code it writes there.
 */
async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o711 });
  const st = await lstat(dir);
  const uid = process.getuid?.();
  const problem = !st.isDirectory()
    ? 'it is not a directory (a link?)'
    : uid !== undefined && st.uid !== uid
      ? `it belongs to uid ${st.uid}, not to this server (uid ${uid})`
      : (st.mode & 0o022) !== 0
        ? `others may write to it (mode ${(st.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) {
    throw new InferError('INTERNAL', `refusing to write model bundles to ${dir}: ${problem}; remove it or pass another cacheDir`);
  }
}

const swept = new Set<string>();

/**
 * Deletes bundles left in the cache folder by server processes that are gone (killed before they
 * could unload their models). Bundle names carry their writer's pid. Once per folder per process.
 */
export async function sweepStaleBundles(cacheDir: string = defaultCacheDir()): Promise<void> {
  if (swept.has(cacheDir)) return;
  swept.add(cacheDir);
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const m = /-(?:v\d+|autocomplete|test)-(\d+)-[^-]+\.mjs$/.exec(name);
      if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) await rm(path.join(cacheDir, name), { force: true });
    }),
  );
}

/** Deletes a transpiled file (on model unload); missing files are fine. */
export async function removeTranspiled(file: string): Promise<void> {
  await rm(file, { force: true });
}
