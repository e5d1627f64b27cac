import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferError } from '@tritium/core';
import { TrtCallError, TrtShim, TrtStatus, resolveShimPath } from '../src/index.ts';
import { TempDir, buildDouble, doubleEngine } from './helpers.ts';

let dir: TempDir;
let shim: TrtShim;
const enc = (text: string) => new TextEncoder().encode(text);
const f32 = (values: number[]) => new Uint8Array(Float32Array.from(values).buffer);

beforeAll(() => {
  dir = new TempDir();
  shim = TrtShim.load(buildDouble(dir.root));
});
afterAll(() => dir.dispose());

const ADD = doubleEngine({
  profiles: 2,
  inputs: [
    { name: 'A', type: 0, dims: [-1, -1], profiles: [[[1, 1], [2, 4], [8, 16]], [[1, 1], [1, 1], [2, 2]]] },
    { name: 'B', type: 0, dims: [-1, -1], profiles: [[[1, 1], [2, 4], [8, 16]], [[1, 1], [1, 1], [2, 2]]] },
  ],
  outputs: [{ name: 'SUM', type: 0, dims: [-1, -1] }],
  op: 'add',
});

describe('binding over the test double', () => {
  it('says what it loaded', () => {
    expect(shim.implementation).toMatch(/test-double/);
  });

  it('reads names, modes, types, dims and every profile', () => {
    const engine = shim.deserialize(enc(ADD), 0);
    try {
      const info = engine.info();
      expect(info.numProfiles).toBe(2);
      expect(info.tensors.map((t) => [t.name, t.mode, t.trtType, t.dims])).toEqual([
        ['A', 'input', 0, [-1, -1]],
        ['B', 'input', 0, [-1, -1]],
        ['SUM', 'output', 0, [-1, -1]],
      ]);
      expect(info.tensors[0]!.profiles).toEqual([
        { min: [1, 1], opt: [2, 4], max: [8, 16] },
        { min: [1, 1], opt: [1, 1], max: [2, 2] },
      ]);
      expect(info.tensors[2]!.profiles).toEqual([]);
    } finally {
      engine.destroy();
    }
  });

  it('runs set shape → write → enqueue → synchronize → read, with views at an offset', () => {
    const engine = shim.deserialize(enc(ADD), 0);
    const context = engine.createContext(0);
    try {
      context.setInputShape('A', [2, 3]);
      context.setInputShape('B', [2, 3]);
      const padded = new Uint8Array(64);
      padded.set(f32([1, 2, 3, 4, 5, 6]), 8);
      context.writeInput('A', padded.subarray(8, 32));
      context.writeInput('B', f32([10, 20, 30, 40, 50, 60]));
      expect(context.tensorShape('SUM')).toEqual([2, 3]);
      context.enqueue();
      context.synchronize();
      const out = new Uint8Array(24);
      context.readOutput('SUM', out);
      expect(Array.from(new Float32Array(out.buffer))).toEqual([11, 22, 33, 44, 55, 66]);
    } finally {
      context.destroy();
      engine.destroy();
    }
  });

  it("runs the double's addsub op (Triton's simple: sum and difference), used by gpu-check's dry run", () => {
    const engine = shim.deserialize(
      enc(
        doubleEngine({
          inputs: [
            { name: 'INPUT0', type: 0, dims: [-1, 2] },
            { name: 'INPUT1', type: 0, dims: [-1, 2] },
          ],
          outputs: [
            { name: 'OUTPUT0', type: 0, dims: [-1, 2] },
            { name: 'OUTPUT1', type: 0, dims: [-1, 2] },
          ],
          op: 'addsub',
        }),
      ),
      0,
    );
    const context = engine.createContext(0);
    try {
      context.setInputShape('INPUT0', [1, 2]);
      context.setInputShape('INPUT1', [1, 2]);
      context.writeInput('INPUT0', f32([5, 7]));
      context.writeInput('INPUT1', f32([1, 2]));
      context.enqueue();
      context.synchronize();
      const [sum, diff] = [new Uint8Array(8), new Uint8Array(8)];
      context.readOutput('OUTPUT0', sum);
      context.readOutput('OUTPUT1', diff);
      expect([Array.from(new Float32Array(sum.buffer)), Array.from(new Float32Array(diff.buffer))]).toEqual([
        [6, 9],
        [4, 5],
      ]);
    } finally {
      context.destroy();
      engine.destroy();
    }
  });

  it('reports failing calls with their status and the shim message', () => {
    const engine = shim.deserialize(enc(ADD), 0);
    const context = engine.createContext(1);
    try {
      const shape = (() => context.setInputShape('A', [3, 1])) as () => void;
      expect(shape).toThrow(TrtCallError);
      expect(shape).toThrow("trt_context_set_input_shape('A') failed (SHAPE): double: input 'A' dim 0 = 3 is outside profile 1 [1, 2]");
      context.setInputShape('A', [1, 1]);
      let error: unknown;
      try {
        context.writeInput('A', new Uint8Array(3));
      } catch (err) {
        error = err;
      }
      expect((error as TrtCallError).status).toBe(TrtStatus.INVALID);
      expect(() => engine.createContext(5)).toThrow('double: invalid optimization profile 5');
      expect(() => shim.deserialize(enc('not an engine'), 0)).toThrow("trt_engine_deserialize failed (RUNTIME): double: not a test-double engine");
    } finally {
      context.destroy();
      engine.destroy();
    }
  });
});

describe('loading the shim', () => {
  it('names a library that does not exist and how to build it', () => {
    let error: unknown;
    try {
      TrtShim.load(join(dir.root, 'nope', 'libtritium_trt.so'));
    } catch (err) {
      error = err;
    }
    expect(InferError.is(error)).toBe(true);
    expect((error as InferError).code).toBe('UNAVAILABLE');
    const message = (error as InferError).message;
    expect(message).toContain(`the TensorRT shim '${join(dir.root, 'nope', 'libtritium_trt.so')}' does not exist`);
    expect(message).toContain('libnvinfer.so.10');
    expect(message).toContain('libcudart');
    expect(message).toContain('TENSORRT_HOME');
    expect(message).toContain('native/build.sh');
  });

  it('names the missing TensorRT library when the shim links one that is absent', () => {
    // A shim built against a libnvinfer.so.10 that is then gone: what a machine without TensorRT sees.
    const stub = join(dir.root, 'libnvinfer.so.10');
    const src = join(dir.root, 'stub.c');
    writeFileSync(src, 'int trt_stub(void) { return 0; }\n');
    execFileSync('cc', ['-shared', '-fPIC', '-Wl,-soname,libnvinfer.so.10', '-o', stub, src]);
    const needing = join(dir.root, 'libneeds_nvinfer.so');
    execFileSync('cc', ['-shared', '-fPIC', '-o', needing, src, stub, '-Wl,--no-as-needed']);
    rmSync(stub);
    expect(() => TrtShim.load(needing)).toThrow(/TensorRT backend unavailable: cannot load the TensorRT shim '.*libneeds_nvinfer\.so' \(.*libnvinfer\.so\.10.*\)/);
  });

  it('takes the path from the option, then TRITIUM_TRT_SHIM, then the build folder', () => {
    expect(resolveShimPath('/x/lib.so', { TRITIUM_TRT_SHIM: '/y/lib.so' })).toBe('/x/lib.so');
    expect(resolveShimPath(undefined, { TRITIUM_TRT_SHIM: '/y/lib.so' })).toBe('/y/lib.so');
    expect(resolveShimPath(undefined, {})).toMatch(/backend-tensorrt\/native\/build\/libtritium_trt\.so$/);
  });
});
