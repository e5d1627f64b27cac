/**
 * `tritium model run` as a user runs it: any model of a repository — a model.ts, an ONNX model, an
 * ensemble of both, a decoupled model — runs offline through the server's own load path; stdout
 * is nothing but the JSON (what the model prints lands on stderr).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runTritium } from './support/run-cli.ts';
import { buildAddSubModel } from '@tritium/onnx-gen';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const repo = mkdtempSync(path.join(tmpdir(), 'tritium-model-run-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

function model(name: string, config: string, files: Record<string, string | Uint8Array>): void {
  mkdirSync(path.join(repo, name, '1'), { recursive: true });
  writeFileSync(path.join(repo, name, 'config.pbtxt'), config);
  for (const [f, content] of Object.entries(files)) writeFileSync(path.join(repo, name, '1', f), content);
}

// A model.ts that talks on stdout (console.log) in initialize and execute: doubles INPUT0.
model(
  'double',
  `name: "double"
backend: "python"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "Y" data_type: TYPE_INT32 dims: [ 16 ] } ]`,
  {
    'model.ts': `import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  initialize() { console.log('double: initialized'); }
  execute(requests: InferenceRequest[]) {
    console.log('double: executing', requests.length);
    return requests.map((r) => {
      const x = r.inputs()[0]!;
      return new InferenceResponse([new Tensor('Y', (x.data as Int32Array).map((v) => 2 * v), x.shape)]);
    });
  }
}
`,
  },
);
// An ONNX model with no config.pbtxt inputs (auto-completed from model.onnx): Triton's add_sub.
model('addsub', 'name: "addsub"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n', { 'model.onnx': buildAddSubModel() });
// The ensemble: X → double → addsub(INPUT0 = 2X, INPUT1 = X) → SUM, DIFF.
model(
  'pipeline',
  `name: "pipeline"
platform: "ensemble"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "SUM" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "DIFF" data_type: TYPE_INT32 dims: [ 16 ] } ]
ensemble_scheduling { step [
  { model_name: "double" model_version: -1 input_map { key: "X" value: "X" } output_map { key: "Y" value: "DOUBLED" } },
  { model_name: "addsub" model_version: -1 input_map [ { key: "INPUT0" value: "DOUBLED" }, { key: "INPUT1" value: "X" } ]
    output_map [ { key: "OUTPUT0" value: "SUM" }, { key: "OUTPUT1" value: "DIFF" } ] }
] }`,
  {},
);

const tritium = (args: string[]) => runTritium(args, ROOT);

const X = Array.from({ length: 16 }, (_, i) => i);

describe('tritium model run', () => {
  it('runs an ensemble of a model.ts and an ONNX model; stdout holds only the JSON, the model talks on stderr', async () => {
    const r = await tritium(['model', 'run', path.join(repo, 'pipeline'), '--input', `X=${JSON.stringify(X)}`]);
    expect(r.err).not.toMatch(/tritium model run:/);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out);
    expect(result.model).toBe('pipeline');
    expect(result.version).toBe(1);
    const outputs = Object.fromEntries(result.responses[0].outputs.map((o: { name: string; data: number[] }) => [o.name, o.data]));
    expect(outputs['SUM']).toEqual(X.map((x) => 3 * x));
    expect(outputs['DIFF']).toEqual(X);
    expect(result.responses[0].outputs[0].shape).toEqual([1, 16]);
    expect(r.err).toContain('double: initialized');
    expect(r.err).toContain('double: executing 1');
  });

  it('runs an ONNX model alone (no model.ts needed) and a decoupled model (one entry per response)', async () => {
    const [onnx, repeat] = await Promise.all([
      tritium(['model', 'run', path.join(repo, 'addsub'), '--input', `INPUT0=${JSON.stringify(X)}`, '--input', `INPUT1=${JSON.stringify(X)}`, '--output', 'OUTPUT0']),
      tritium(['model', 'run', 'examples/model_repository/repeat', '--input', 'IN=[7,8,9]']),
    ]);
    expect(onnx.code).toBe(0);
    expect(JSON.parse(onnx.out).responses).toEqual([{ outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: X.map((x) => 2 * x) }] }]);
    expect(repeat.code).toBe(0);
    const responses = JSON.parse(repeat.out).responses as { outputs: { name: string; data: number[] }[] }[];
    expect(responses.map((resp) => resp.outputs.find((o) => o.name === 'OUT')!.data[0])).toEqual([7, 8, 9]);
  });

  it("fails in one line with the server's message, and nothing on stdout", async () => {
    const r = await tritium(['model', 'run', path.join(repo, 'double'), '--input', 'X=[1,2,3]']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/tritium model run: INVALID_ARG: \[request id: model-run\] unexpected shape for input 'X' for model 'double'\. Expected \[-1,16\], got \[1,3\]/);
  });
});
