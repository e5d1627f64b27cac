/**
 * The type-check worker: TypeScript's compiler, loaded here only (it is an optional dependency of
 * this package), checks one model at a time. Declarations outside the models (TypeScript's libs,
 * `@types/node`, packages' `.d.ts`) are parsed once and kept, so a check after the first costs
 * the model's own files. The checker reads only the model's folder, `node_modules` folders,
 * TypeScript's libs and the folders the server names: a `/// <reference path>` elsewhere reads as
 * a missing file.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import type * as TS from 'typescript';
import type { CheckReply, CheckRequest } from './check-protocol.ts';

type Ts = typeof TS;

let loaded: Promise<Ts | string> | undefined;

function loadTypeScript(): Promise<Ts | string> {
  loaded ??= import('typescript').then(
    (m: unknown) => (m as { default?: Ts }).default ?? (m as Ts),
    (error: unknown) => `the optional dependency 'typescript' cannot be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
  );
  return loaded;
}

/** Parsed declaration files outside the models, by path, with the mtime they were read at. */
const shared = new Map<string, { mtimeMs: number; file: TS.SourceFile }>();
const SHARED_MAX = 4096;
/** TS7016: "Could not find a declaration file for module 'x'" (a JavaScript package without types). */
const UNTYPED_PACKAGE = 7016;

function inside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function check(ts: Ts, req: CheckRequest): string[] {
  const { options, errors } = ts.convertCompilerOptionsFromJson(req.options, req.modelDir);
  if (errors.length > 0) return errors.map((d) => `compiler options: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  const libDir = path.dirname(ts.getDefaultLibFilePath(options));
  const roots = [req.modelDir, libDir, ...req.readRoots];
  const overlay = new Map(Object.entries(req.overlay));
  const readable = (file: string): boolean =>
    overlay.has(file) || file.split(path.sep).includes('node_modules') || roots.some((root) => inside(file, root));
  const host = ts.createCompilerHost(options, true);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (file) => overlay.get(file) ?? (readable(file) ? readFile(file) : undefined);
  host.fileExists = (file) => overlay.has(file) || (readable(file) && fileExists(file));
  host.getSourceFile = (file, languageVersion) => {
    const text = overlay.get(file);
    if (text !== undefined) return ts.createSourceFile(file, text, languageVersion, true);
    if (!readable(file)) return undefined;
    const own = inside(file, req.modelDir);
    let mtimeMs = 0;
    try {
      mtimeMs = statSync(file).mtimeMs;
    } catch {
      return undefined;
    }
    const kept = own ? undefined : shared.get(file);
    if (kept && kept.mtimeMs === mtimeMs) return kept.file;
    const source = readFile(file);
    if (source === undefined) return undefined;
    const parsed = ts.createSourceFile(file, source, languageVersion, true);
    if (!own && shared.size < SHARED_MAX) shared.set(file, { mtimeMs, file: parsed });
    return parsed;
  };
  const fallback = req.fallbackDir ? path.join(req.fallbackDir, '__tritium_resolve__.ts') : undefined;
  host.resolveModuleNameLiterals = (literals, containingFile, _redirect, opts) =>
    literals.map((literal) => {
      const first = ts.resolveModuleName(literal.text, containingFile, opts, host);
      if (first.resolvedModule || !fallback || literal.text.startsWith('.')) return first;
      const second = ts.resolveModuleName(literal.text, fallback, opts, host);
      return second.resolvedModule ? second : first;
    });
  const program = ts.createProgram({ rootNames: [req.rootFile], options, host });
  const problems: string[] = [];
  for (const file of program.getSourceFiles()) {
    if (!inside(file.fileName, req.modelDir) || overlay.has(file.fileName) || file.isDeclarationFile) continue;
    const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    for (const d of diagnostics) {
      // A package that ships no declarations is typed `any` (as a `declare module` would): not a reason to refuse a model.
      if (d.code === UNTYPED_PACKAGE) continue;
      const { line, character } = file.getLineAndCharacterOfPosition(d.start ?? 0);
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
      const kind = d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning';
      problems.push(`${file.fileName}:${line + 1}:${character + 1}: ${kind} TS${d.code}: ${message}`);
    }
  }
  return problems;
}

parentPort!.on('message', (req: CheckRequest) => {
  void loadTypeScript().then((ts) => {
    let reply: CheckReply;
    if (typeof ts === 'string') reply = { id: req.id, unavailable: ts };
    else {
      try {
        reply = { id: req.id, problems: check(ts, req) };
      } catch (error) {
        reply = { id: req.id, unavailable: `the type check failed: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    parentPort!.postMessage(reply);
  });
});
