/**
 * `tritium config --config-only`: configs checked by themselves, with no model file and no backend,
 * as a CI job whose model files live in object storage runs it; and Triton's L0_model_config
 * corpus (its config-only cases) refused through the real command with Triton's messages.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runTritium } from './support/run-cli.ts';
import { configCommand } from '../src/cli/config-command.ts';
// The corpus's one reader (cases, grep patterns, version folders) lives with core's config tests.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { corpusUnavailableReason, EXAMPLES_ROOT, loadCorpusCases, matchesExpected, withPlatform } from '../../../packages/core/test/config/corpus-cases.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const work = mkdtempSync(path.join(tmpdir(), 'tritium-config-only-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `<work>/<repo>/<name>/config.pbtxt` and nothing else: no version folder, no model file. */
function configOnlyModel(repo: string, name: string, config: string): string {
  const dir = path.join(work, repo, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'config.pbtxt'), config);
  return dir;
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await configCommand(['--config-only', ...args], {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  });
  return { code, out, err };
}

const spawnTritium = (args: string[]) => runTritium(args, REPO);

const ONNX = (name: string, inType = 'TYPE_FP32') => `name: "${name}"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "IN" data_type: ${inType} dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
`;

const ENSEMBLE = (name: string, step: string, inType = 'TYPE_FP32') => `name: "${name}"
platform: "ensemble"
max_batch_size: 8
input [ { name: "X" data_type: ${inType} dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [ { model_name: "${step}" model_version: -1 input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "Y" } } ] }
`;

describe('tritium config --config-only (in process)', () => {
  it('passes configs whose model files are elsewhere, normalized as Triton prints them', async () => {
    const dir = configOnlyModel('a', 'net', ONNX('net'));
    const r = await run([dir]);
    expect(r.err).toBe('tritium config --config-only: 1 config(s) passed, 0 problem(s)\n');
    expect(r.code).toBe(0);
    // Triton's defaults, with nothing read from a model file: two CPU instances for ONNX Runtime.
    expect(JSON.parse(r.out)).toMatchObject({
      name: 'net',
      backend: 'onnxruntime',
      version_policy: { latest: { num_versions: 1 } },
      instance_group: [{ name: 'net', kind: 'KIND_CPU', count: 2 }],
    });
  });

  it('wires an ensemble against the configs given with it, and only those', async () => {
    configOnlyModel('b', 'net', ONNX('net'));
    configOnlyModel('b', 'ens', ENSEMBLE('ens', 'net'));
    const ok = await run([path.join(work, 'b')]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).map((c: { name: string }) => c.name)).toEqual(['ens', 'net']);

    const ens = configOnlyModel('c', 'ens', ENSEMBLE('ens', 'net', 'TYPE_INT32'));
    const net = configOnlyModel('c', 'net', ONNX('net'));
    const mismatch = await run([ens, net]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.err).toBe(
      `${ens}/config.pbtxt: in ensemble ens, ensemble tensor X: inconsistent data type: TYPE_INT32 is inferred from model ens while TYPE_FP32 is inferred from model net\n` +
        'tritium config --config-only: 1 config(s) passed, 1 problem(s)\n',
    );

    const alone = await run([ens]);
    expect(alone.code).toBe(1);
    expect(alone.err).toContain(`${ens}/config.pbtxt: ensemble ens contains models that are not available or ambiguous: net (not among the configs given)\n`);
  });

  it('refuses an ensemble whose composing config is invalid, naming both', async () => {
    const ens = configOnlyModel('d', 'ens', ENSEMBLE('ens', 'net'));
    const net = configOnlyModel('d', 'net', ONNX('net').replace('max_batch_size: 8', 'max_batch_size: -1'));
    const r = await run([path.join(work, 'd')]);
    expect(r.code).toBe(1);
    expect(r.err.split('\n')).toEqual([
      `${ens}/config.pbtxt: ensemble 'ens' depends on 'net' which is not valid. Model 'net' failed with error: 'max_batch_size' must be non-negative value for net`,
      `${net}/config.pbtxt:3:1: 'max_batch_size' must be non-negative value for net`,
      'tritium config --config-only: 0 config(s) passed, 2 problem(s)',
      '',
    ]);
  });

  it('leaves inputs and outputs to auto-complete unless told not to (--disable-auto-complete-config)', async () => {
    // An output left out: a backend would complete the model's outputs (and check the inputs) from its file.
    const dir = configOnlyModel('e', 'half', 'name: "half"\nplatform: "onnxruntime_onnx"\ninput [\n  { name: "x" data_type: TYPE_FP32\n    dims: [ 0 ] }\n]\n');
    expect((await run([dir])).code).toBe(0);
    const strict = await run(['--disable-auto-complete-config', dir]);
    expect(strict.code).toBe(1);
    expect(strict.err).toContain(
      `${dir}/config.pbtxt:5:5: model input 'x' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for half\n`,
    );
  });

  it('locates parse errors and checks the folder-name rule, loose files and folders of .pbtxt', async () => {
    const typo = configOnlyModel('f', 'typo', 'name: "typo"\nmax_batch_size: 1\ndynamic_batchig { }\n');
    expect((await run([typo])).err).toContain(
      `${typo}/config.pbtxt:3:1: Message type "inference.ModelConfig" has no field named "dynamic_batchig"; did you mean 'dynamic_batching'?\n`,
    );
    const renamed = configOnlyModel('f', 'folder', ONNX('net'));
    expect((await run([renamed])).err).toContain(
      `${renamed}/config.pbtxt:1:1: unexpected directory name 'folder' for model 'net', directory name must equal model name\n`,
    );
    const loose = path.join(work, 'loose');
    mkdirSync(loose);
    writeFileSync(path.join(loose, 'one.pbtxt'), ONNX('one'));
    writeFileSync(path.join(loose, 'two.pbtxt'), ONNX('two', 'TYPE_FLOAT'));
    const r = await run([loose, path.join(work, 'missing')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^${path.join(work, 'missing')}: no such file or folder\n${loose}/two\\.pbtxt:4:33: Unknown enumeration value of "TYPE_FLOAT"`));
    expect(JSON.parse(r.out).name).toBe('one');
  });
});

describe('tritium config --config-only (the real command)', () => {
  it("checks the example repository's configs with every model file removed", async () => {
    const copy = path.join(work, 'example');
    cpSync(path.join(REPO, 'model_repository'), copy, {
      recursive: true,
      filter: (src) => src === path.join(REPO, 'model_repository') || path.basename(src) === 'config.pbtxt' || !src.slice(path.join(REPO, 'model_repository').length + 1).includes('/'),
    });
    const files = readdirSync(copy, { recursive: true }).map(String).sort();
    expect(files.every((f) => !/^[^/]+\/\d+/.test(f)), 'no version folder copied').toBe(true);
    const r = await spawnTritium(['config', '--config-only', copy, '-q']);
    expect(r.err).toMatch(/^tritium config --config-only: \d+ config\(s\) passed, 0 problem\(s\)\n$/);
    expect(r.code).toBe(0);
    // One config per model folder; files beside them (tsconfig.json, the example setup's stamp) are not models.
    expect(Number(/(\d+) config/.exec(r.err)![1])).toBe(readdirSync(copy, { withFileTypes: true }).filter((d) => d.isDirectory()).length);
  });

  const unavailable = corpusUnavailableReason();
  if (unavailable) console.warn(`skipped: ${unavailable}`);

  it.skipIf(unavailable !== undefined)("refuses Triton's config-only corpus cases with Triton's messages, in one call", async () => {
    // Cases that need a model file, a GPU inventory or other models are not the config's alone.
    const GPU_INVENTORY = new Set(['invalid_gpu', 'negative_gpu']);
    const cases = loadCorpusCases().filter((c) => c.runner === 'config' && c.singleModel && !GPU_INVENTORY.has(c.modelName));
    expect(cases.length).toBeGreaterThanOrEqual(100);
    const folders = cases.map((c, i) => {
      const dir = path.join(work, 'corpus', String(i), c.modelName);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'config.pbtxt'), withPlatform(readFileSync(path.join(c.folder, 'config.pbtxt'), 'utf8'), c.platform));
      return dir;
    });
    const r = await spawnTritium(['config', '--config-only', '--disable-auto-complete-config', '-q', ...folders]);
    expect(r.code).toBe(1);
    const lines = r.err.split('\n');
    const unmatched = cases.filter((c, i) => {
      const line = lines.find((l) => l.startsWith(`${folders[i]}/config.pbtxt:`));
      return line === undefined || !matchesExpected(c, line);
    });
    expect(unmatched.map((c) => c.id)).toEqual([]);
  });

  it.skipIf(unavailable !== undefined)("passes every example config of Triton's docs that has its composing models", async () => {
    const r = await spawnTritium(['config', '--config-only', '-q', EXAMPLES_ROOT]);
    // The one ensemble example names a composing model whose config is not in the examples.
    expect(r.err.split('\n').filter((l) => l && !l.startsWith('tritium config'))).toEqual([
      `${EXAMPLES_ROOT}/qa__L0_config_json__ensemble_config.pbtxt: ensemble simple_ensemble contains models that are not available or ambiguous: onnx_nobatch_float32_float32_float32 (not among the configs given)`,
    ]);
    expect(r.code).toBe(1);
  });
});
