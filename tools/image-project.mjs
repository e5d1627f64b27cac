#!/usr/bin/env node
// The project the container image installs (deploy/Containerfile): run in a built workspace, it packs
// the publishable packages (`npm pack`) into <tarballs> and writes <project>/package.json, whose
// dependencies are the tarballs of one install set plus the packages the example's model.ts files
// import, so that the image installs Tritium as a user does (README "Install").
//
//   node tools/image-project.mjs write <tarballs> <project> [onnx|all]
//   node tools/image-project.mjs list [onnx|all]     # the set's packages and the example's imports, as JSON
//
// Sets: `onnx` (the default: what the example serves) is @tritium/server and @tritium/backend-onnx
// with the workspace packages they depend on; `all` is every publishable package. Plain JavaScript,
// run by Node itself: apps/server/test/deploy/image-project.test.ts runs it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY = path.join(ROOT, 'model_repository');
const SETS = { onnx: ['@tritium/server', '@tritium/backend-onnx'], all: undefined };

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** The workspace's packages by name: their package.json and folder. */
function workspacePackages() {
  const packages = new Map();
  for (const pattern of readJson(path.join(ROOT, 'package.json')).workspaces) {
    const parent = path.join(ROOT, pattern.replace(/\/\*$/, ''));
    for (const dir of readdirSync(parent)) {
      const file = path.join(parent, dir, 'package.json');
      if (existsSync(file)) packages.set(readJson(file).name, { pkg: readJson(file), dir: path.join(parent, dir) });
    }
  }
  return packages;
}

/** The publishable packages of `set` and every workspace package they depend on (dependencies only). */
function setPackages(set, packages = workspacePackages()) {
  if (!(set in SETS)) throw new Error(`unknown install set '${set}' (one of: ${Object.keys(SETS).join(', ')})`);
  const roots = SETS[set] ?? [...packages].filter(([, p]) => !p.pkg.private).map(([name]) => name);
  const chosen = new Set();
  const visit = (name) => {
    if (chosen.has(name)) return;
    const entry = packages.get(name);
    if (!entry || entry.pkg.private) throw new Error(`${name} is not a publishable workspace package`);
    chosen.add(name);
    for (const dep of Object.keys(entry.pkg.dependencies ?? {})) if (packages.has(dep)) visit(dep);
  };
  roots.forEach(visit);
  return [...chosen].sort();
}

/** Bare imports of the example's model.ts files that are not Tritium's or Node's, with the installed version. */
function exampleImports() {
  const found = {};
  for (const model of readdirSync(REPOSITORY, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const version of readdirSync(path.join(REPOSITORY, model.name))) {
      const file = path.join(REPOSITORY, model.name, version, 'model.ts');
      if (!existsSync(file)) continue;
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '([^.'][^']*)'/g)) {
        if (spec.startsWith('node:') || spec.startsWith('@tritium/')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        found[name] = readJson(path.join(ROOT, 'node_modules', name, 'package.json')).version;
      }
    }
  }
  return found;
}

/** Packs `names` into `tarballs`; their `file:` specs by name. */
function pack(names, tarballs) {
  mkdirSync(tarballs, { recursive: true });
  const args = ['pack', '--json', '--pack-destination', tarballs, ...names.flatMap((n) => ['-w', n])];
  const packed = JSON.parse(execFileSync('npm', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  return Object.fromEntries(packed.map((p) => [p.name, `file:${path.join(path.resolve(tarballs), p.filename)}`]));
}

const USAGE = 'usage: node tools/image-project.mjs write <tarballs> <project> [onnx|all] | list [onnx|all]';

function main([command, ...args]) {
  if (command === 'list') {
    console.log(JSON.stringify({ packages: setPackages(args[0] ?? 'onnx'), imports: exampleImports() }));
    return;
  }
  const [tarballs, project, set = 'onnx'] = args;
  if (command !== 'write' || !tarballs || !project) throw new Error(USAGE);
  const names = setPackages(set);
  const specs = pack(names, tarballs);
  const imports = exampleImports();
  mkdirSync(project, { recursive: true });
  const manifest = { name: 'tritium-image', private: true, type: 'module', dependencies: { ...specs, ...imports } };
  writeFileSync(path.join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`install set '${set}': ${names.join(' ')}; the example imports: ${Object.keys(imports).join(' ') || 'nothing else'}`);
}

try {
  main(process.argv.slice(2));
} catch (err) {
  console.error(`image-project: ${err.message}`);
  process.exit(1);
}
