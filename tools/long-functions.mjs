#!/usr/bin/env node
/**
 * Lists every function over a length (default 80 lines) in the sources of packages/* and apps/*
 * (their `src/`, generated files left out), longest first: `file:line  lines  name`.
 *
 *   node tools/long-functions.mjs                  # list them
 *   node tools/long-functions.mjs --under packages/core --lines 80
 *   node tools/long-functions.mjs --max 20         # exit 1 when more than 20 are listed
 *
 * A function's length is its lines from its first to its last, nested functions included (they are
 * listed too when long themselves). Object literals of methods count per method.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

const limit = Number(option('lines', '80'));
const max = option('max', undefined);
const under = option('under', undefined);

function sourceDirs() {
  if (under) return [path.resolve(root, under, 'src')];
  const dirs = [];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(path.join(root, group))) dirs.push(path.join(root, group, name, 'src'));
  }
  return dirs;
}

function* tsFiles(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) {
      if (name !== 'generated' && name !== 'node_modules') yield* tsFiles(file);
    } else if (/\.[cm]?ts$/.test(name) && !name.endsWith('.d.ts')) yield file;
  }
}

function nameOf(node, source) {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

const found = [];
for (const dir of sourceDirs()) {
  for (const file of tsFiles(dir)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > limit) found.push({ where: `${path.relative(root, file)}:${first + 1}`, lines, name: nameOf(node, source) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
}

found.sort((a, b) => b.lines - a.lines || a.where.localeCompare(b.where));
for (const f of found) console.log(`${f.where.padEnd(64)} ${String(f.lines).padStart(4)}  ${f.name}`);
console.log(`${found.length} function(s) over ${limit} lines`);
if (max !== undefined && found.length > Number(max)) {
  console.error(`more than the budget of ${max}`);
  process.exitCode = 1;
}
