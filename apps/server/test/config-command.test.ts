import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { configCommand } from '../src/cli/config-command.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const work = mkdtempSync(path.join(tmpdir(), 'tritium-config-cmd-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function modelDir(name: string, config: string | undefined, versionFiles: string[] = []): string {
  const dir = path.join(work, name);
  mkdirSync(path.join(dir, '1'), { recursive: true });
  for (const f of versionFiles) writeFileSync(path.join(dir, '1', f), '');
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

const SIMPLE = `name: "simple"
backend: "onnxruntime"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
dynamic_batching { }
`;

describe('tritium config (in process)', () => {
  it('prints a model folder normalized as Triton JSON', async () => {
    const r = await run([modelDir('simple', SIMPLE)]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json).toMatchObject({
      name: 'simple',
      platform: 'onnxruntime_onnx',
      default_model_filename: 'model.onnx',
      version_policy: { latest: { num_versions: 1 } },
      dynamic_batching: { preferred_batch_size: [8] },
      instance_group: [{ name: 'simple', kind: 'KIND_CPU', count: 2 }],
    });
    expect(r.out.startsWith('{\n  "name": "simple",')).toBe(true);
  });

  it('completes a folder without config.pbtxt from its model file, and fills the name from the folder', async () => {
    const r = await run([modelDir('pre.processing', undefined, ['model.ts'])]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ name: 'pre.processing', backend: 'python', default_model_filename: 'model.py' });
  });

  it('locates parse errors, validation errors and the folder-name rule in the file', async () => {
    const dir = modelDir('typo', 'name: "typo"\nmax_batch_size: 1\ndynamic_batchig { }\n');
    const parse = await run([dir]);
    expect(parse.code).toBe(1);
    expect(parse.err).toBe(
      `${dir}/config.pbtxt:3:1: Message type "inference.ModelConfig" has no field named "dynamic_batchig"; did you mean 'dynamic_batching'?\n`,
    );

    const bad = modelDir('zero', 'name: "zero"\nbackend: "python"\ninput [\n  { name: "x" data_type: TYPE_FP32\n    dims: [ 0 ] }\n]\n');
    expect((await run([bad])).err).toBe(
      `${bad}/config.pbtxt:5:5: model input 'x' dimension must be integer >= 1, or -1 to indicate a variable-size dimension for zero\n`,
    );

    const renamed = modelDir('folder', SIMPLE);
    expect((await run([renamed])).err).toBe(
      `${renamed}/config.pbtxt:1:1: unexpected directory name 'folder' for model 'simple', directory name must equal model name\n`,
    );
  });

  it('takes a bare config file (no folder-name rule) and reports usage errors', async () => {
    const file = path.join(work, 'other.pbtxt');
    writeFileSync(file, SIMPLE);
    expect((await run([file])).code).toBe(0);
    expect(await run([path.join(work, 'missing')])).toMatchObject({ code: 1, err: `${path.join(work, 'missing')}:1:1: no such file or folder\n` });
    expect((await run([])).code).toBe(1);
    expect((await run(['--help'])).out).toContain('usage: tritium config');
  });
});

function spawnTritium(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, 'apps/server/bin/tritium.mjs'), ...args], { cwd: REPO });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('tritium config (the real command)', () => {
  it('exits 0 with JSON for a good folder and 1 with file:line:column for a bad one', async () => {
    const good = modelDir('simple2', SIMPLE.replace('"simple"', '"simple2"'));
    const bad = modelDir('bad', 'name: "bad"\nname: "again"\n');
    const [ok, fail] = await Promise.all([spawnTritium(['config', good]), spawnTritium(['config', bad])]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).name).toBe('simple2');
    expect(fail.code).toBe(1);
    expect(fail.out).toBe('');
    expect(fail.err).toBe(`${bad}/config.pbtxt:2:1: Non-repeated field "name" is specified multiple times.\n`);
  });
});
