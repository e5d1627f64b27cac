#!/usr/bin/env node
// `npm start [-- <serve flags>]`: build what `tritium serve` runs, generate the example's files, serve
// the example repository; a line for each step as it goes (which step, how far, how long), so the
// first start is never silent.
//   1. build: only the server's project graph (the packages serve imports and the example setup),
//      emitted without type checking (tsc -b --noCheck: about half of the compile's time); the
//      checked build is `npm run build` / `npm run typecheck`, which also checks what this skipped.
//      Nothing is rebuilt when the outputs are up to date.
//   2. example setup: the tokenizer files and ONNX models, regenerated only when their inputs changed.
//   3. serve: the server's own log, plus one line per model loaded (k of n) and one when it serves.
// Plain JavaScript, run by Node itself: nothing here needs a build.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY = 'model_repository';
/** The server's project graph: what `tritium serve` and the example setup import. */
const PROJECTS = ['apps/server/tsconfig.lib.json', 'tools/example-setup/tsconfig.lib.json'];
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const started = performance.now();

const secs = (t0) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
const say = (line) => process.stderr.write(`tritium start: ${line}\n`);

/** Runs `node <args>`, each output line to `onLine`; resolves with the exit code. */
function run(args, onLine, options = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...options });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop();
      for (const line of lines) onLine(line.replace(/\r$/, ''), stream === child.stdout);
    });
    stream.on('end', () => rest && onLine(rest, stream === child.stdout));
  }
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  return { child, exited };
}

/** The project tsc reports on a --verbose line (`Building project '/x/packages/core/tsconfig.lib.json'...`). */
function projectOf(line) {
  const m = /(?:Building project|Project) '([^']+)'(?: is up to date)?/.exec(line);
  if (!m) return undefined;
  const rel = m[1].startsWith(ROOT) ? m[1].slice(ROOT.length + 1) : m[1];
  return { name: dirname(rel), building: line.includes('Building project'), upToDate: line.includes('is up to date') };
}

async function build() {
  const t0 = performance.now();
  say(`[1/3] build: the server's projects, without type checks (npm run typecheck checks them)`);
  const seen = new Set();
  const errors = [];
  let current = 'starting tsc';
  const heartbeat = setInterval(() => say(`[1/3] build: still compiling ${current} (${secs(t0)})`), 10_000);
  let total = 0;
  const { exited } = run([TSC, '-b', '--noCheck', '--verbose', ...PROJECTS], (line) => {
    const p = projectOf(line);
    if (/^ +\* \S+tsconfig[^ ]*\.json$/.test(line)) {
      total++; // tsc lists the projects of the build first
    } else if (p && (p.building || p.upToDate) && !seen.has(p.name)) {
      seen.add(p.name);
      current = p.name;
      say(`[1/3] build ${seen.size}/${total}: ${p.upToDate ? `${p.name} is up to date` : `compiling ${p.name}`} (${secs(t0)})`);
    } else if (/error TS\d+/.test(line) || (errors.length > 0 && line.startsWith(' '))) {
      errors.push(line);
    }
  });
  const code = await exited;
  clearInterval(heartbeat);
  if (code !== 0) {
    for (const line of errors) process.stderr.write(`${line}\n`);
    say(`[1/3] build failed (exit ${code}) after ${secs(t0)}`);
    process.exit(code);
  }
  say(`[1/3] build: done in ${secs(t0)}`);
}

async function exampleSetup() {
  const t0 = performance.now();
  say('[2/3] example setup: tokenizer files and ONNX models (generated, nothing downloaded)');
  const { exited } = run(['tools/example-setup/dist/main.js'], (line) => say(`[2/3] ${line}`));
  const code = await exited;
  if (code !== 0) process.exit(code);
  say(`[2/3] example setup: done in ${secs(t0)}`);
}

/** The models `serve` loads from the repository: each folder with a config or a version folder. */
function modelsOf(repository) {
  return readdirSync(join(ROOT, repository)).filter((name) => {
    const dir = join(ROOT, repository, name);
    if (!statSync(dir).isDirectory()) return false;
    return existsSync(join(dir, 'config.pbtxt')) || readdirSync(dir).some((f) => /^\d+$/.test(f));
  });
}

async function serve(flags) {
  const t0 = performance.now();
  const models = modelsOf(REPOSITORY);
  say(`[3/3] serve: loading ${models.length} models of ${REPOSITORY}`);
  const done = new Set();
  const listening = new Map();
  const { child, exited } = run(['apps/server/bin/tritium.mjs', 'serve', '--model-repository', REPOSITORY, ...flags], (line, stdout) => {
    (stdout ? process.stdout : process.stderr).write(`${line}\n`);
    const loaded = /successfully loaded '([^']+)'|failed to load '([^']+)'/.exec(line);
    if (loaded && !done.has(loaded[1] ?? loaded[2])) {
      done.add(loaded[1] ?? loaded[2]);
      say(`[3/3] models: ${done.size}/${models.length} ${loaded[1] ? 'loaded' : 'FAILED'} (${loaded[1] ?? loaded[2]}, ${secs(t0)})`);
    }
    const service = /Started (HTTPService|GRPCInferenceService) at (\S+)/.exec(line);
    if (service) {
      listening.set(service[1], service[2]);
      if (listening.size === 2) say(`serving: HTTP ${listening.get('HTTPService')}, gRPC ${listening.get('GRPCInferenceService')} (${secs(started)} since npm start)`);
    }
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  process.exitCode = await exited;
}

const flags = process.argv.slice(2);
await build();
await exampleSetup();
await serve(flags);
