/** The @tritium/core/testing backends through the backend SPI, in real workers. */
import { describe, expect, it } from 'vitest';
import { InferError } from '../../src/errors.ts';
import { identityBackend, addSubBackend, faultBackend } from '../../src/testing/index.ts';
import type { Backend, InstanceSpec, ModelInstance } from '../../src/backend/spi.ts';
import type { ModelConfig } from '../../src/config/model-config.ts';
import type { InferResponse } from '../../src/types.ts';
import { silentLogger } from '../../src/logger.ts';
import { tensorFromTyped, typedView, type Tensor } from '../../src/tensor/tensor.ts';

const never = new AbortController().signal;

/** The few config fields the test backends read. */
function config(name: string, backend: string, inputs: string[], outputs: string[]): ModelConfig {
  return { name, backend, input: inputs.map((n) => ({ name: n })), output: outputs.map((n) => ({ name: n })) } as unknown as ModelConfig;
}

async function instanceOf(backend: Backend, cfg: ModelConfig, extra: Partial<InstanceSpec> = {}) {
  const model = await backend.loadModel({ config: cfg, version: 1, modelDir: '/nonexistent', versionDir: '/nonexistent/1', log: silentLogger });
  const instance: ModelInstance = await model.createInstance({ name: `${cfg.name}_0_0`, kind: 'CPU', device: 0, groupName: cfg.name, ...extra });
  return {
    instance,
    close: async () => {
      await instance.dispose();
      await model.dispose();
    },
  };
}

function only(results: readonly (InferResponse | InferError)[]): InferResponse {
  const r = results[0];
  if (!r || InferError.is(r)) throw new Error(String(r));
  return r;
}

describe('@tritium/core/testing backends', () => {
  it('identity renames inputs to outputs', async () => {
    const { instance, close } = await instanceOf(identityBackend(), config('id', 'identity', ['IN'], ['OUT']));
    try {
      const input: Tensor = tensorFromTyped('IN', 'FP32', [1, 2], new Float32Array([1.5, -2]));
      const r = only((await instance.execute([{ id: 'r', model: 'id', inputs: [input] }], never)).results);
      expect(r).toMatchObject({ id: 'r', model: 'id', version: 1 });
      expect(r.outputs[0]).toMatchObject({ name: 'OUT', datatype: 'FP32', shape: [1, 2] });
      expect([...typedView(r.outputs[0]!)]).toEqual([1.5, -2]);
    } finally {
      await close();
    }
  });

  it('addsub adds and subtracts INT32 and FP32, and rejects mixed types per request', async () => {
    const { instance, close } = await instanceOf(addSubBackend(), config('as', 'addsub', ['INPUT0', 'INPUT1'], ['OUTPUT0', 'OUTPUT1']));
    try {
      const i32 = (n: string, v: number[]) => tensorFromTyped(n, 'INT32', [v.length], new Int32Array(v));
      const f32 = (n: string, v: number[]) => tensorFromTyped(n, 'FP32', [v.length], new Float32Array(v));
      const results = (await instance.execute(
        [
          { id: 'a', model: 'as', inputs: [i32('INPUT0', [5, 7]), i32('INPUT1', [1, 2])] },
          { id: 'b', model: 'as', inputs: [f32('INPUT0', [0.5]), f32('INPUT1', [0.25])] },
          { id: 'c', model: 'as', inputs: [i32('INPUT0', [1]), f32('INPUT1', [1])] },
        ],
        never,
      )).results;
      const [a, b, c] = results as [InferResponse, InferResponse, InferError];
      expect([...typedView(a.outputs[0]!)]).toEqual([6, 9]);
      expect([...typedView(a.outputs[1]!)]).toEqual([4, 5]);
      expect([...typedView(b.outputs[0]!)]).toEqual([0.75]);
      expect([...typedView(b.outputs[1]!)]).toEqual([0.25]);
      expect(c).toMatchObject({ code: 'INVALID_ARG', message: 'addsub supports INT32 or FP32 inputs of one type, got INT32 and FP32' });
    } finally {
      await close();
    }
  });

  it('fault passes onUnavailable from the instance spec and fails single requests on demand', async () => {
    const reasons: string[] = [];
    const { instance, close } = await instanceOf(
      faultBackend({ restart: { maxRestarts: 0, keepTrying: false } }),
      config('f', 'fault', ['INPUT0'], ['OUTPUT0']),
      { onUnavailable: (r) => reasons.push(r) },
    );
    try {
      const input = tensorFromTyped('INPUT0', 'INT32', [1], new Int32Array([1]));
      const [failed, fine] = (await instance.execute(
        [
          { id: '1', model: 'f', inputs: [input], parameters: { fault: 'fail' } },
          { id: '2', model: 'f', inputs: [input] },
        ],
        never,
      )).results;
      expect(failed).toMatchObject({ code: 'INVALID_ARG', message: "fault backend: request '1' failed on purpose" });
      expect(InferError.is(fine)).toBe(false);
      await expect(instance.execute([{ id: '3', model: 'f', inputs: [input], parameters: { fault: 'exit' } }], never)).rejects.toMatchObject({
        code: 'INTERNAL',
      });
      expect(reasons).toEqual(["model 'f' instance 'f_0_0' crashed once; last cause: worker exited with code 3"]);
    } finally {
      await close();
    }
  });
});
