#!/usr/bin/env node
// `npm run lint`: ESLint over the whole workspace (same rules and result as `eslint --max-warnings=0 .`),
// one top-level project at a time with a line each, so a long lint shows progress instead of silence.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const SKIP = new Set(['node_modules', '.git']);
const NESTED = new Set(['packages', 'apps', 'tools', 'examples']);
const eslint = new ESLint({ errorOnUnmatchedPattern: false });
const groups = [];
for (const entry of readdirSync('.', { withFileTypes: true })) {
  if (SKIP.has(entry.name)) continue;
  const names = entry.isDirectory() && NESTED.has(entry.name) ? readdirSync(entry.name, { withFileTypes: true }).map((c) => ({ name: join(entry.name, c.name), dir: c.isDirectory() })) : [{ name: entry.name, dir: entry.isDirectory() }];
  // A file named on the command line is linted (or warned about) even where `eslint .` would skip it.
  for (const { name, dir } of names) if (dir || (await eslint.calculateConfigForFile(name)) !== undefined) groups.push(name);
}

const results = [];
let files = 0;
for (const group of groups.sort()) {
  const started = performance.now();
  const found = (await eslint.lintFiles([group])).filter((r) => !r.filePath.includes('/node_modules/'));
  if (found.length === 0) continue;
  const problems = found.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
  files += found.length;
  results.push(...found);
  process.stdout.write(`lint ${group}: ${found.length} files, ${problems} problem${problems === 1 ? '' : 's'} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}
const errors = results.reduce((n, r) => n + r.errorCount, 0);
const warnings = results.reduce((n, r) => n + r.warningCount, 0);
if (errors + warnings > 0) {
  process.stdout.write(await (await eslint.loadFormatter('stylish')).format(results));
  process.exitCode = 1;
} else {
  process.stdout.write(`lint: ${files} files, no problems\n`);
}
