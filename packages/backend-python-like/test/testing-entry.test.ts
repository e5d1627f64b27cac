/**
 * `@tritium/backend-python-like/testing` as an author uses it: a model folder on disk loaded into
 * the test process; a batch of typed requests through one execute (per-request responses, a
 * whole-batch response split by rows, an error response for one request, a thrown error failing
 * the call); requests checked as the server checks them; log lines returned per call; decoupled
 * models, auto-completed configs and BLS answered by the test; finalize. And the same entry from
 * `node --test`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadModel } from '@tritium/backend-python-like/testing';
import { TritonError } from '@tritium/backend-python-like/model';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, 'fixtures');
const repo = mkdtempSync(path.join(tmpdir(), 'tritium-testing-'));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** The model's Spec, as `tritium types` writes it into model-types.d.ts. */
type Spec = {
  readonly name: 'lengths';
  readonly maxBatchSize: 8;
  readonly inputs: { readonly TEXT: { readonly datatype: 'BYTES'; readonly dims: readonly [1]; readonly shape: readonly [number, number]; readonly optional: false } };
  readonly outputs: { readonly LENGTH: { readonly datatype: 'INT64'; readonly dims: readonly [1]; readonly shape: readonly [number, number]; readonly optional: false } };
};

const dir = path.join(repo, 'lengths');
mkdirSync(path.join(dir, '1'), { recursive: true });
writeFileSync(
  path.join(dir, 'config.pbtxt'),
  `name: "lengths"
backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "LENGTH" data_type: TYPE_INT64 dims: [ 1 ] } ]
parameters { key: "unit" value: { string_value: "chars" } }`,
);
// Batch-first: one response for the whole call (split by rows), unless a request asks to fail or throw.
writeFileSync(
  path.join(dir, '1', 'model.ts'),
  `import { InferenceResponse, Logger, Tensor, TritonError, stackInputs, type InferenceRequest, type InitializeArgs } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  unit = '';
  initialize(args: InitializeArgs) {
    this.unit = args.modelConfig.parameters?.['unit']?.string_value ?? '';
    Logger.logInfo('initialized in ' + this.unit);
  }
  execute(requests: InferenceRequest[]) {
    const text = stackInputs(requests, 'TEXT').strings();
    Logger.logInfo('batch of ' + requests.length + ' requests, ' + text.length + ' rows');
    if (text.includes('throw')) throw new Error('asked to throw');
    if (text.includes('fail')) {
      return requests.map((r) => r.inputs()[0]!.strings().includes('fail')
        ? new InferenceResponse({ error: new TritonError('asked to fail', TritonError.INVALID_ARG) })
        : new InferenceResponse([new Tensor('LENGTH', BigInt64Array.from(r.inputs()[0]!.strings(), (s) => BigInt(s.length)), [r.inputs()[0]!.shape[0]!, 1])]));
    }
    return [new InferenceResponse([new Tensor('LENGTH', BigInt64Array.from(text, (s) => BigInt(s.length)), [text.length, 1])])];
  }
  finalize() { Logger.logInfo('finalized'); }
}
`,
);

describe('loadModel (vitest)', () => {
  it('runs initialize, a batch of typed requests through one execute, finalize; returns typed responses and log lines', async () => {
    const model = await loadModel<Spec>(dir);
    expect(model.version).toBe(1);
    expect(model.logs).toEqual([{ level: 'info', message: 'initialized in chars' }]);
    // Two requests, one execute: TEXT ["a","bb"] is two rows (dims [1], batching), as the server reads it.
    const { responses, logs } = await model.execute([{ TEXT: ['a', 'bb'] }, { TEXT: [['ccc']] }]);
    expect(logs).toEqual([{ level: 'info', message: 'batch of 2 requests, 3 rows' }]);
    expect(responses).toHaveLength(2);
    const first = responses[0]!.outputs.LENGTH;
    expect(first.datatype).toBe('INT64');
    expect(first.shape).toEqual([2, 1]);
    expect([...first.data]).toEqual([1n, 2n]);
    expect(responses[1]!.outputs.LENGTH.toArray()).toEqual([[3n]]);

    const failing = await model.execute([{ TEXT: ['fail'] }, { TEXT: ['ok'] }]);
    expect(failing.responses[0]!.error).toBeInstanceOf(TritonError);
    expect(failing.responses[0]!.error).toMatchObject({ code: 'INVALID_ARG', message: 'asked to fail' });
    expect([...failing.responses[1]!.outputs.LENGTH.data]).toEqual([2n]);

    await expect(model.execute([{ TEXT: ['throw'] }])).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/^Failed to process the request\(s\) for model instance 'lengths_0_0', message: Error: asked to throw/),
    });
    await model.finalize();
    expect(model.logs.at(-1)).toEqual({ level: 'info', message: 'finalized' });
  });

  it('checks requests as the server does, naming the input', async () => {
    const model = await loadModel<Spec>(dir);
    // A wrong name or array type is a compile error with the Spec; at run time the server's checks answer.
    await expect(model.execute([{ TXET: ['a'] } as never])).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringContaining("unexpected inference input 'TXET' for model 'lengths'") });
    await expect(model.execute([{ TEXT: new Float32Array(1) } as never])).rejects.toThrow("input 'TEXT' is BYTES: give strings, not a Float32Array");
    await model.finalize();
  });

  it('runs a decoupled model (every streamed response per request), an auto-completed config, and BLS answered by the test', async () => {
    const repeat = await loadModel(path.join(FIXTURES, 'repeat'));
    const streamed = await repeat.executeDecoupled([{ IN: Int32Array.of(4, 5, 6) }]);
    expect(streamed.responses[0]!.map((r) => [...(r.outputs['OUT']!.data as Int32Array)])).toEqual([[4], [5], [6]]);
    await repeat.finalize();

    const auto = await loadModel(path.join(FIXTURES, 'auto'));
    expect(auto.config.max_batch_size).toBe(4);
    expect(auto.config.input.map((i) => i.name)).toEqual(['IN']);
    const doubled = await auto.execute([{ IN: Float32Array.of(1, 2) }]);
    expect(doubled.responses[0]!.outputs['OUT']!.shape).toEqual([1, 2]);
    expect([...(doubled.responses[0]!.outputs['OUT']!.data as Float32Array)]).toEqual([2, 4]);
    await auto.finalize();

    const calls: string[] = [];
    const caller = await loadModel(path.join(FIXTURES, 'bls_caller'), {
      bls: (call) => {
        calls.push(call.model);
        return { id: call.id, model: call.model, version: 1, outputs: [{ ...call.inputs[0]!, name: 'OUTPUT0' }] };
      },
    });
    const forwarded = await caller.execute([{ INPUT0: Float32Array.of(1, 2, 3, 4), INPUT1: Float32Array.of(0, 0, 0, 0) }]);
    expect(calls).toEqual(['add_sub']);
    expect([...(forwarded.responses[0]!.outputs['OUTPUT0']!.data as Float32Array)]).toEqual([1, 2, 3, 4]);
    await caller.finalize();
  });
});

describe('loadModel (node --test)', () => {
  it('runs the same from node --test, on the compiled entry', async () => {
    const file = path.join(HERE, 'node', 'testing-entry.node-test.mjs');
    const result = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--test', file], { env: { ...process.env, TRITIUM_TEST_MODEL: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(result.out).toMatch(/# pass 1\n/);
    expect(result.code, result.out).toBe(0);
  });
});
