/**
 * Types from the config, as an author uses them outside the workspace: `tritium types` writes
 * model-types.d.ts/.js and a tsconfig.json; TypeScript's own `tsc -p` then reports a misspelt
 * input or output name, a wrong array type and a plain type error at their lines; `tritium config`
 * reports the same as `model.ts:line:col: ...` and refuses (or, with --model-type-check=warn, warns);
 * `tritium serve` does not load it; a config changed without running `tritium types` again is
 * reported; a correct model passes all of them and runs with the config's datatypes.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runNode } from './support/run-cli.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'apps/server/bin/tritium.mjs');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const repo = mkdtempSync(path.join(tmpdir(), 'tritium-types-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const run = (file: string, args: string[]) => runNode(file, args, repo);
const tritium = (...args: string[]) => run(BIN, args);

const CONFIG = `name: "NAME"
backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "LENGTHS" data_type: TYPE_INT64 dims: [ 1 ] }, { name: "SCORES" data_type: TYPE_FP32 dims: [ 2 ] } ]
`;

/** A typed model.ts; `mistakes` adds one of each kind of error, each on its own line. */
function modelSource(mistakes: boolean): string {
  return `import { InferenceResponse, Tensor, type Request } from './model-types.js';
import { TritonError } from '@tritium/backend-python-like/model';

/** Reads members TritonError inherits from the server's own error type. */
export function codeOf(e: unknown): TritonError {
  const code = e instanceof TritonError ? e.code : TritonError.INTERNAL;
  return new TritonError(e instanceof Error ? e.message : String(e), code);
}

export default class TritonPythonModel {
  execute(requests: Request[]) {
    return requests.map((request) => {
      const text = request.input(${mistakes ? "'TXET'" : "'TEXT'"}).strings();
      ${mistakes ? "const count: number = 'oops';" : 'const count: number = text.length;'}
      const lengths = BigInt64Array.from(text, (t) => BigInt(t.length));
      const scores = ${mistakes ? 'new Float64Array(count * 2)' : 'new Float32Array(count * 2)'};
      return new InferenceResponse({
        outputTensors: [new Tensor(${mistakes ? "'LENGHTS'" : "'LENGTHS'"}, lengths, [count, 1]), new Tensor('SCORES', scores, [count, 2])],
      });
    });
  }
}
`;
}

function writeModel(name: string, mistakes: boolean): string {
  const dir = path.join(repo, name);
  mkdirSync(path.join(dir, '1'), { recursive: true });
  writeFileSync(path.join(dir, 'config.pbtxt'), CONFIG.replace('NAME', name));
  writeFileSync(path.join(dir, '1', 'model.ts'), modelSource(mistakes));
  return dir;
}

const good = writeModel('good', false);
const bad = writeModel('bad', true);
const stale = writeModel('stale', false);
/** Each step runs the CLI (a cold start, a type check) on a shared 2-core machine. */
const SLOW = 300_000;

describe('tritium types', () => {
  it('writes model-types.d.ts, model-types.js and a tsconfig.json; tsc -p reports each mistake at its line, and nothing for the correct model', async () => {
    const written = await tritium('types', bad, good, stale);
    expect(written.code, written.err).toBe(0);
    for (const dir of [bad, good]) {
      for (const file of ['1/model-types.d.ts', '1/model-types.js', 'tsconfig.json']) expect(written.out).toContain(`written ${path.join(dir, file)}`);
    }
    expect(readFileSync(path.join(good, '1', 'model-types.js'), 'utf8')).toContain('"SCORES":"FP32"');

    const tscGood = await run(TSC, ['-p', good]);
    expect(tscGood.out + tscGood.err).toBe('');
    expect(tscGood.code).toBe(0);

    const tscBad = await run(TSC, ['-p', bad]);
    expect(tscBad.code).not.toBe(0);
    const diagnostics = tscBad.out.split('\n').filter((l) => /^bad\/1\/model\.ts\(\d+,\d+\): error TS\d+/.test(l));
    expect(diagnostics).toEqual([
      expect.stringMatching(/^bad\/1\/model\.ts\(13,\d+\): error TS2345: Argument of type '"TXET"' is not assignable to parameter of type '"TEXT"'/),
      expect.stringMatching(/^bad\/1\/model\.ts\(14,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/),
      expect.stringMatching(/^bad\/1\/model\.ts\(18,\d+\): error TS2345: Argument of type '"LENGHTS"' is not assignable to parameter of type '"LENGTHS" \| "SCORES"'/),
      expect.stringMatching(/^bad\/1\/model\.ts\(18,\d+\): error TS2345: Argument of type 'Float64Array<ArrayBuffer>' is not assignable to parameter of type 'Float32Array/),
    ]);

  }, SLOW);

  it('tritium config reports the same as model.ts:line:col and fails; --model-type-check=warn passes with warnings', async () => {
    const checked = await tritium('config', '-q', bad, good);
    expect(checked.code).toBe(1);
    expect(checked.err).not.toContain(path.join(good, '1'));
    const model = path.join(bad, '1', 'model.ts');
    for (const [line, code] of [[13, 2345], [14, 2322], [18, 2345]] as const) {
      expect(checked.err).toMatch(new RegExp(`^${model.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${line}:\\d+: error TS${code}: `, 'm'));
    }
    const warned = await tritium('config', '-q', '--model-type-check=warn', bad);
    expect(warned.code, warned.err).toBe(0);
    expect(warned.err).toMatch(/^warning: model 'bad': .*model\.ts:14:\d+: error TS2322/m);
  }, SLOW);

  it('tritium serve refuses to load the model that does not type-check', async () => {
    const served = await tritium('serve', '--model-repository', repo, '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0', '--exit-timeout-secs', '1');
    expect(served.code).not.toBe(0);
    expect(served.err).toMatch(/failed to load 'bad' version 1: .*does not type-check/);
    expect(served.err).toMatch(/bad\/1\/model\.ts:14:\d+: error TS2322/);
    expect(served.err).toMatch(/successfully loaded 'good' version 1/);
  }, SLOW);

  it('a config changed without tritium types again: the generated files are reported out of date', async () => {
    writeFileSync(path.join(stale, 'config.pbtxt'), CONFIG.replace('NAME', 'stale').replace('TYPE_FP32', 'TYPE_FP64'));
    const checked = await tritium('config', '-q', stale);
    expect(checked.code).toBe(1);
    expect(checked.err).toContain(`${path.join(stale, '1', 'model-types.d.ts')}: out of date with the model's config: run \`tritium types ${stale}\``);
  }, SLOW);

  it('the typed model runs, each output taking its datatype from the config', async () => {
    const result = await tritium('model', 'run', good, '--input', 'TEXT=["ab","cde"]');
    expect(result.code, result.err).toBe(0);
    const outputs = (JSON.parse(result.out) as { responses: { outputs: { name: string; datatype: string; shape: number[]; data: unknown[] }[] }[] }).responses[0]!.outputs;
    expect(outputs.find((o) => o.name === 'LENGTHS')).toMatchObject({ datatype: 'INT64', data: [2, 3] });
    expect(outputs.find((o) => o.name === 'SCORES')).toMatchObject({ datatype: 'FP32' });
  }, SLOW);
});
