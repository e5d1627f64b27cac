/**
 * `npm run generate`: writes the generated files (generated-files.ts) from the vendored protos.
 * `--check` writes nothing and exits 1 naming each file that differs from what would be written.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './generated-files.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const check = process.argv.includes('--check');
let stale = 0;
for (const file of generatedFiles(root)) {
  const target = path.join(root, file.path);
  let current: string | undefined;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === file.text) continue;
  if (check) {
    process.stderr.write(`stale: ${file.path}\n`);
    stale++;
  } else {
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, file.text);
    process.stdout.write(`wrote ${file.path}\n`);
  }
}
if (stale > 0) {
  process.stderr.write(`${stale} generated file(s) differ from the protos: run \`npm run generate\`\n`);
  process.exitCode = 1;
}
