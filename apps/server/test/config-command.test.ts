/**
 * `tritium config` checks what `tritium serve` would load, with the server's own load path (check
 * only: no instance starts): auto-complete from the model file, backend resolution, the backend's
 * load checks, ensembles against their composing models; several paths and whole repositories.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runTritium } from './support/run-cli.ts';
import { buildAddSubModel } from '@tritium/onnx-gen';
import { configCommand } from '../src/cli/config-command.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const work = mkdtempSync(path.join(tmpdir(), 'tritium-config-cmd-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A model folder in repository `repo` (under the temp folder), with `config` and version-1 files. */
function modelDir(repo: string, name: string, config: string | undefined, files: Record<string, string | Uint8Array> = {}): string {
  const dir = path.join(work, repo, name);
  mkdirSync(path.join(dir, '1'), { recursive: true });
  for (const [f, content] of Object.entries(files)) writeFileSync(path.join(dir, '1', f), content);
  if (config !== undefined) writeFileSync(path.join(dir, 'config.pbtxt'), config);
  return dir;
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await configCommand(args, {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: (t: string) => (err += t) },
  });
  return { code, out, err };
}

const IDENTITY_TS = `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    return requests.map((r) => new InferenceResponse([new Tensor('OUTPUT0', r.inputs()[0]!.data, r.inputs()[0]!.shape)]));
  }
}
`;

const PY = (name: string, backend = 'python') => `name: "${name}"
backend: "${backend}"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
dynamic_batching { }
`;

describe('tritium config (in process)', () => {
  it('prints a model folder completed as Triton JSON', async () => {
    const r = await run([modelDir('a', 'ident', PY('ident'), { 'model.ts': IDENTITY_TS })]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      name: 'ident',
      backend: 'python',
      version_policy: { latest: { num_versions: 1 } },
      dynamic_batching: { preferred_batch_size: [8] },
      instance_group: [{ name: 'ident', kind: 'KIND_CPU', count: 1 }],
    });
    expect(r.out.startsWith('{\n  "name": "ident",')).toBe(true);
  });

  it("completes a config from the model file, as serve's auto-complete does", async () => {
    // No config.pbtxt at all: backend, inputs, outputs and batching come from model.onnx.
    const dir = modelDir('a', 'addsub', undefined, { 'model.onnx': buildAddSubModel() });
    const r = await run([dir]);
    // Serve's warning for the batch size it picked reaches the user too.
    expect(r.err).toBe(
      "warning: autofilled max_batch_size to 4 for model 'addsub' since batching is supporrted but no max_batch_size is specified in model configuration. Must specify max_batch_size to utilize autofill with a larger max batch size\n",
    );
    const json = JSON.parse(r.out);
    expect(json).toMatchObject({ name: 'addsub', backend: 'onnxruntime', platform: 'onnxruntime_onnx', max_batch_size: 4 });
    expect(json.input.map((i: { name: string; data_type: string; dims: number[] }) => [i.name, i.data_type, i.dims])).toEqual([
      ['INPUT0', 'TYPE_INT32', [16]],
      ['INPUT1', 'TYPE_INT32', [16]],
    ]);
  });

  it('refuses a backend no server has, naming it (a misspelt "pyton")', async () => {
    const dir = modelDir('b', 'typo', PY('typo', 'pyton'), { 'model.ts': IDENTITY_TS });
    const r = await run([dir]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(`${dir}/config.pbtxt: unable to find backend library for backend 'pyton', try specifying runtime on the model configuration.\n`);
  });

  it("checks an ensemble against its composing models (the model file's config, not only the ensemble's)", async () => {
    modelDir('c', 'ident', PY('ident'), { 'model.ts': IDENTITY_TS });
    const ens = modelDir(
      'c',
      'ens',
      `name: "ens"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [ { model_name: "ident" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }
`,
    );
    const r = await run([ens]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `${ens}/config.pbtxt: in ensemble ens, ensemble tensor IN: inconsistent data type: TYPE_INT32 is inferred from model ens while TYPE_FP32 is inferred from model ident\n`,
    );
  });

  it('runs the backend load checks: a model.ts that does not compile fails with its own position', async () => {
    const dir = modelDir('d', 'broken', PY('broken'), { 'model.ts': 'export default class TritonPythonModel { execute( }\n' });
    const r = await run([dir]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`^model 'broken': failed to compile ${dir}/1/model\\.ts:\n${dir}/1/model\\.ts:1:51: error: Expected identifier`));
  });

  it('takes several paths and whole repositories in one call', async () => {
    const ok1 = modelDir('e', 'one', PY('one'), { 'model.ts': IDENTITY_TS });
    modelDir('e', 'two', PY('two'), { 'model.ts': IDENTITY_TS });
    modelDir('f', 'three', PY('three'), { 'model.ts': IDENTITY_TS });
    const bad = modelDir('f', 'four', PY('four').replace('TYPE_FP32', 'TYPE_FLOAT32'), { 'model.ts': IDENTITY_TS });
    const r = await run([ok1, path.join(work, 'f')]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).map((c: { name: string }) => c.name)).toEqual(['one', 'three']);
    expect(r.err).toBe(
      `${bad}/config.pbtxt:4:37: Unknown enumeration value of "TYPE_FLOAT32" for field "data_type". Did you mean 'TYPE_FP32'? ` +
        'Valid values: TYPE_BOOL, TYPE_UINT8, TYPE_UINT16, TYPE_UINT32, TYPE_UINT64, TYPE_INT8, TYPE_INT16, TYPE_INT32, TYPE_INT64, TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_STRING, TYPE_BF16.\n' +
        'tritium config: 2 model(s) passed, 1 problem(s)\n',
    );
    expect((await run(['-q', ok1, path.join(work, 'e')])).out).toBe('');
  });

  it('locates parse errors, validation errors and the folder-name rule in the file', async () => {
    const dir = modelDir('g', 'typo', 'name: "typo"\nmax_batch_size: 1\ndynamic_batchig { }\n');
    const parse = await run([dir]);
    expect(parse.code).toBe(1);
    expect(parse.err).toBe(
      `${dir}/config.pbtxt:3:1: Message type "inference.ModelConfig" has no field named "dynamic_batchig"; did you mean 'dynamic_batching'?\n`,
    );

    const bad = modelDir('g', 'zero', 'name: "zero"\nbackend: "python"\ninput [\n  { name: "x" data_type: TYPE_FP32\n    dims: [ 0 ] }\n]\n');
    expect((await run([bad])).err).toBe(
      `${bad}/config.pbtxt:5:5: model input 'x' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for zero\n`,
    );

    const renamed = modelDir('g', 'folder', PY('ident'), { 'model.ts': IDENTITY_TS });
    expect((await run([renamed])).err).toBe(
      `${renamed}/config.pbtxt:1:1: unexpected directory name 'folder' for model 'ident', directory name must equal model name\n`,
    );
  });

  it('takes a config.pbtxt path as its folder and refuses other files and missing paths', async () => {
    const dir = modelDir('h', 'ident', PY('ident'), { 'model.ts': IDENTITY_TS });
    expect(JSON.parse((await run([path.join(dir, 'config.pbtxt')])).out).name).toBe('ident');
    const other = path.join(work, 'other.pbtxt');
    writeFileSync(other, PY('other'));
    expect((await run([other])).err).toMatch(/^.*other\.pbtxt: not a model's config: give its model folder/);
    expect(await run([path.join(work, 'missing')])).toMatchObject({ code: 1, err: `${path.join(work, 'missing')}: no such file or folder\n` });
    expect((await run([])).code).toBe(1);
    expect((await run(['--bogus', dir])).err).toContain("tritium config: unknown option '--bogus'");
    expect((await run(['--help'])).out).toContain('usage: tritium config');
  });
});

const spawnTritium = (args: string[]) => runTritium(args, REPO);

describe('tritium config (the real command)', () => {
  it('checks the example repository as served: every model passes', async () => {
    const r = await spawnTritium(['config', 'examples/model_repository']);
    expect(r.err).toBe('tritium config: 6 model(s) passed, 0 problem(s)\n');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).map((c: { name: string }) => c.name)).toEqual(['echo_llm', 'identity_fp32', 'repeat', 'repeat_int32', 'simple', 'square_int32']);
  });
});
