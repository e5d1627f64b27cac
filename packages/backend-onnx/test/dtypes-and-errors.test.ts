import { mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path, { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError, InferenceServer, tensorFromTyped, type DataType, type InferResponse, type Tensor } from '@tritium/core';
import { DATA_TYPE_SIZE, encodeBytesElements } from '@tritium/core/tensor';
// Tests generate their models with the workspace's ONNX generator (a tool, not a runtime dependency).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { GraphBuilder, ORT_NODE_ELEMENT_TYPES, buildAddSubModel, buildBertModel, buildMultiIdentityModel } from '@tritium/onnx-gen';
import { onnxBackend } from '../src/index.ts';
import { loadModel, request, signal, TempRepo } from './helpers.ts';

let repo: TempRepo;
beforeAll(async () => {
  repo = await TempRepo.create();
});
afterAll(async () => {
  await repo.dispose();
});

/** Valid element bytes for `rows × 3` elements of `datatype` (0/1 for BOOL, real numbers for floats). */
function sample(datatype: DataType, rows: number, seed: number): Tensor {
  const n = rows * 3;
  const shape = [rows, 3];
  const name = `INPUT_${datatype}`;
  switch (datatype) {
    case 'BYTES':
      return { name, datatype, shape, data: encodeBytesElements(Array.from({ length: n }, (_, i) => `s${seed}-${i}`)) };
    case 'BOOL':
      return tensorFromTyped(name, datatype, shape, Uint8Array.from({ length: n }, (_, i) => (i + seed) % 2));
    case 'FP16':
      return tensorFromTyped(name, datatype, shape, Uint16Array.from({ length: n }, (_, i) => 0x3c00 + i + seed)); // 1.0 + ulps
    case 'FP32':
      return tensorFromTyped(name, datatype, shape, Float32Array.from({ length: n }, (_, i) => i * 0.5 - seed));
    case 'FP64':
      return tensorFromTyped(name, datatype, shape, Float64Array.from({ length: n }, (_, i) => i * 0.25 + seed));
    default: {
      const bytes = Uint8Array.from({ length: n * DATA_TYPE_SIZE[datatype] }, (_, i) => (i * 37 + seed) & 0x7f);
      return { name, datatype, shape, data: bytes };
    }
  }
}

describe('every element type onnxruntime-node supports', () => {
  it('round-trips FP16, BOOL, BYTES and every integer/float type, batched across two requests', async () => {
    const types = ORT_NODE_ELEMENT_TYPES as DataType[];
    const m = await loadModel(repo, 'all_types', buildMultiIdentityModel(ORT_NODE_ELEMENT_TYPES), 'max_batch_size: 8');
    try {
      expect(m.config.input.map((i) => i.data_type)).toEqual(types.map((t) => (t === 'BYTES' ? 'TYPE_STRING' : `TYPE_${t}`)));
      const a = request('all_types', types.map((t) => sample(t, 1, 1)));
      const b = request('all_types', types.map((t) => sample(t, 2, 2)));
      const results = (await m.instance.execute([a, b], signal())).results;
      results.forEach((result, k) => {
        expect(InferError.is(result)).toBe(false);
        const response = result as InferResponse;
        const sent = (k === 0 ? a : b).inputs;
        expect(response.outputs).toHaveLength(types.length);
        for (const input of sent) {
          const output = response.outputs.find((o) => o.name === input.name.replace('INPUT_', 'OUTPUT_'))!;
          expect([output.datatype, output.shape]).toEqual([input.datatype, input.shape]);
          expect(Buffer.from(output.data).equals(Buffer.from(input.data))).toBe(true);
        }
      });
    } finally {
      await m.dispose();
    }
  });
});

describe('bad model files fail the load with a clear message', () => {
  const config = 'max_batch_size: 4\ninput [{ name: "INPUT0", data_type: TYPE_INT32, dims: [16] }, { name: "INPUT1", data_type: TYPE_INT32, dims: [16] }]\noutput [{ name: "OUTPUT0", data_type: TYPE_INT32, dims: [16] }]';

  it('missing file', async () => {
    const err = await loadModel(repo, 'missing', undefined, config).catch((e: unknown) => e);
    expect(InferError.is(err) && err.code).toBe('UNAVAILABLE');
    expect((err as Error).message).toMatch(/^unable to find '.*missing\/1\/model\.onnx' for model instance 'missing'$/);
  });

  it('corrupt file', async () => {
    const garbage = Uint8Array.from({ length: 256 }, (_, i) => (i * 131 + 7) & 0xff);
    const err = await loadModel(repo, 'corrupt', garbage, config).catch((e: unknown) => e);
    expect(InferError.is(err) && err.code).toBe('INVALID_ARG');
    expect((err as Error).message).toMatch(/^failed to load model 'corrupt': '.*corrupt\/1\/model\.onnx' is not a valid ONNX model \(/);
  });

  it('truncated file', async () => {
    const bytes = buildBertModel({ vocabSize: 32, hidden: 8, layers: 1, heads: 2, maxPosition: 8 });
    const err = await loadModel(repo, 'truncated', bytes.subarray(0, bytes.byteLength >> 1), config).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^failed to load model 'truncated': '.*' is not a valid ONNX model/);
  });

  it('a well-formed file onnxruntime rejects', async () => {
    const g = new GraphBuilder();
    g.input('INPUT0', 'INT32', ['batch', 16]);
    g.input('INPUT1', 'INT32', ['batch', 16]);
    g.output('OUTPUT0', 'INT32', ['batch', 16]);
    g.node('NoSuchOperator', ['INPUT0', 'INPUT1'], ['OUTPUT0']);
    const err = await loadModel(repo, 'bad_op', g.toBytes(), config).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^failed to load model 'bad_op': onnxruntime cannot create a session from '.*model\.onnx': .*NoSuchOperator/);
  });

  it('honours default_model_filename', async () => {
    const { versionDir } = await repo.model('custom_name', undefined);
    await writeFile(join(versionDir, 'custom.onnx'), buildAddSubModel());
    const m = await loadModel(repo, 'custom_name', undefined, 'default_model_filename: "custom.onnx"', { instance: false });
    try {
      expect(m.config.output.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
    } finally {
      await m.dispose();
    }
  });
});

describe('runtime errors inside onnxruntime', () => {
  it('fail the batch with INTERNAL and leave the instance serving', async () => {
    const m = await loadModel(repo, 'oob', buildBertModel({ vocabSize: 16, hidden: 8, layers: 1, heads: 2, maxPosition: 8 }), 'max_batch_size: 2');
    try {
      const ids = (values: number[]) => tensorFromTyped('input_ids', 'INT64', [1, values.length], BigInt64Array.from(values.map(BigInt)));
      const mask = (n: number) => tensorFromTyped('attention_mask', 'INT64', [1, n], new BigInt64Array(n).fill(1n));
      const [bad] = (await m.instance.execute([request('oob', [ids([1, 999]), mask(2)])], signal())).results;
      expect(InferError.is(bad) && bad.code).toBe('INTERNAL');
      expect((bad as Error).message).toMatch(/^onnx runtime error for model 'oob': /);
      const [good] = (await m.instance.execute([request('oob', [ids([1, 2]), mask(2)])], signal())).results;
      expect(InferError.is(good)).toBe(false);
    } finally {
      await m.dispose();
    }
  });
});

describe('--disable-auto-complete-config / --strict-model-config', () => {
  it('loads the config as written: a config without inputs is refused with Triton\'s message', async () => {
    for (const flags of [{ disableAutoCompleteConfig: true }, { strictModelConfig: true }]) {
      const root = path.join(repo.root, `strict_${Object.keys(flags)[0]}`);
      mkdirSync(path.join(root, 'strict', '1'), { recursive: true });
      writeFileSync(path.join(root, 'strict', '1', 'model.onnx'), buildAddSubModel());
      writeFileSync(path.join(root, 'strict', 'config.pbtxt'), 'backend: "onnxruntime"\n');
      const server = new InferenceServer({ repositories: [root], backends: [onnxBackend()], ...flags });
      const error = await server.start().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      await server.stop();
      expect(error?.message).toContain("unable to load model 'strict', configuration expects 0 inputs, model provides 2");
    }
  });

  it('with auto-complete on, the same folder loads', async () => {
    const root = path.join(repo.root, 'autocomplete_on');
    mkdirSync(path.join(root, 'lenient', '1'), { recursive: true });
    writeFileSync(path.join(root, 'lenient', '1', 'model.onnx'), buildAddSubModel());
    writeFileSync(path.join(root, 'lenient', 'config.pbtxt'), 'backend: "onnxruntime"\ninstance_group [{ kind: KIND_CPU, count: 1 }]\n');
    const server = new InferenceServer({ repositories: [root], backends: [onnxBackend()] });
    try {
      await server.start();
      expect(server.modelConfig('lenient').max_batch_size).toBe(4);
      const response = await server.infer({
        id: 'x',
        model: 'lenient',
        inputs: [
          tensorFromTyped('INPUT0', 'INT32', [1, 16], new Int32Array(16).fill(5)),
          tensorFromTyped('INPUT1', 'INT32', [1, 16], new Int32Array(16).fill(2)),
        ],
        outputs: [{ name: 'OUTPUT1' }],
      });
      expect(response.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
      expect(Array.from(new Int32Array(response.outputs[0]!.data.slice().buffer))).toEqual(Array(16).fill(3));
    } finally {
      await server.stop();
    }
  });
});

describe('ragged batching (allow_ragged_batch + batch_input)', () => {
  it('concatenates ragged inputs into one 1-D tensor and feeds the accumulated element counts', async () => {
    // OUTPUT[i] = accumulated element count up to item i + Σ of every element of the batch.
    const g = new GraphBuilder();
    g.input('INPUT', 'FP32', ['elements']);
    g.input('INDEX', 'INT32', ['batch']);
    g.output('OUTPUT', 'FP32', ['batch', 1]);
    const index = g.op('Unsqueeze', [g.op('Cast', ['INDEX'], { to: { int: 1 } }), g.int64s('axes', [1], [1])]);
    g.node('Add', [index, g.op('ReduceSum', ['INPUT'], { keepdims: { int: 0 } })], ['OUTPUT']);
    const config = `max_batch_size: 8
input [{ name: "INPUT", data_type: TYPE_FP32, dims: [-1], allow_ragged_batch: true }]
batch_input [{ kind: BATCH_ACCUMULATED_ELEMENT_COUNT, target_name: "INDEX", data_type: TYPE_INT32, source_input: "INPUT" }]
output [{ name: "OUTPUT", data_type: TYPE_FP32, dims: [1] }]`;
    const m = await loadModel(repo, 'ragged', g.toBytes(), config);
    try {
      const req = (n: number) => request('ragged', [tensorFromTyped('INPUT', 'FP32', [1, n], Float32Array.from({ length: n }, (_, i) => i + 1))]);
      const results = (await m.instance.execute([req(3), req(4), req(5)], signal())).results;
      const values = results.map((r) => {
        expect(InferError.is(r), String((r as Error).message)).toBe(false);
        const t = (r as InferResponse).outputs[0]!;
        expect(t.shape).toEqual([1, 1]);
        return new Float32Array(t.data.slice().buffer)[0];
      });
      // Σ = 6 + 10 + 15 = 31; accumulated counts 3, 7, 12.
      expect(values).toEqual([34, 38, 43]);
    } finally {
      await m.dispose();
    }
  });

  it('counts batch inputs among the inputs the model must provide', async () => {
    const config = `max_batch_size: 8
input [{ name: "INPUT0", data_type: TYPE_INT32, dims: [16] }, { name: "INPUT1", data_type: TYPE_INT32, dims: [16] }]
batch_input [{ kind: BATCH_ELEMENT_COUNT, target_name: "COUNT", data_type: TYPE_INT32, source_input: "INPUT0" }]
output [{ name: "OUTPUT0", data_type: TYPE_INT32, dims: [16] }]`;
    await expect(loadModel(repo, 'batch_input_count', buildAddSubModel(), config, { instance: false })).rejects.toThrow(
      "unable to load model 'batch_input_count', configuration expects 3 inputs, model provides 2",
    );
  });
});
