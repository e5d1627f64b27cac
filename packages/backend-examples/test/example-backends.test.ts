/**
 * Triton's example backends through core's InferenceServer, each instance in a real worker:
 * identity (copies, optional inputs, response parameters, delay, config checks with Triton's
 * messages), repeat (decoupled, delays, WAIT releasing the instance) and square (decoupled).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InferError, InferenceServer, silentLogger, tensorFromTyped, typedView, type InferResponse, type Tensor } from '@tritium/core';
import { normalizeModelConfig, parseModelConfigText } from '@tritium/core/config';
import { exampleBackends, IDENTITY_RESPONSE_PARAMETERS } from '../src/index.ts';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function repository(models: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-examples-'));
  temps.push(dir);
  for (const [name, config] of Object.entries(models)) {
    mkdirSync(path.join(dir, name, '1'), { recursive: true });
    writeFileSync(path.join(dir, name, 'config.pbtxt'), config);
  }
  return dir;
}

async function serving(models: Record<string, string>, fn: (server: InferenceServer) => Promise<void>): Promise<void> {
  const server = new InferenceServer({ repositories: [repository(models)], backends: exampleBackends(), exitOnError: false });
  await server.start();
  try {
    await fn(server);
  } finally {
    await server.stop();
  }
}

/** Starts a server on one model and returns the load error of that model, or undefined. */
async function loadError(config: string): Promise<string | undefined> {
  const server = new InferenceServer({ repositories: [repository({ m: config })], backends: exampleBackends() });
  try {
    await server.start();
  } catch (error) {
    return (error as Error).message;
  }
  await server.stop();
  return undefined;
}

function stream(server: InferenceServer, model: string, inputs: Tensor[]): Promise<{ responses: InferResponse[]; error?: InferError }> {
  return new Promise((resolve) => {
    const responses: InferResponse[] = [];
    server.inferStream({ id: 'r', model, inputs }, { response: (r) => void responses.push(r), complete: (error) => resolve({ responses, error }) });
  });
}

const int32 = (name: string, values: number[], shape = [values.length]): Tensor => tensorFromTyped(name, 'INT32', shape, Int32Array.from(values));
const uint32 = (name: string, values: number[], shape = [values.length]): Tensor => tensorFromTyped(name, 'UINT32', shape, Uint32Array.from(values));
const out = (r: InferResponse, name: string): number[] => [...(typedView(r.outputs.find((o) => o.name === name)!) as Int32Array)];

const IDENTITY = `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] optional: true } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
instance_group [ { kind: KIND_CPU count: 2 } ]
`;

const REPEAT = `backend: "repeat"
max_batch_size: 0
model_transaction_policy { decoupled: True }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] }, { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] } ]
`;

const SQUARE = `backend: "square"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`;

describe('identity', () => {
  it('copies each input to its output, zero-fills an optional input left out, and attaches the example parameters', async () => {
    await serving({ identity: IDENTITY }, async (server) => {
      const x = tensorFromTyped('INPUT0', 'FP32', [2, 3], Float32Array.of(1, 2, 3, 4, 5, 6));
      const full = await server.infer({ id: 'a', model: 'identity', inputs: [x, int32('INPUT1', [7, 8, 9, 10], [2, 2])] });
      expect(full.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([
        ['OUTPUT0', 'FP32', [2, 3]],
        ['OUTPUT1', 'INT32', [2, 2]],
      ]);
      expect([...(typedView(full.outputs[0]!) as Float32Array)]).toEqual([1, 2, 3, 4, 5, 6]);
      expect(out(full, 'OUTPUT1')).toEqual([7, 8, 9, 10]);
      expect(full.parameters).toEqual(IDENTITY_RESPONSE_PARAMETERS);

      const partial = await server.infer({ id: 'b', model: 'identity', inputs: [x], outputs: [{ name: 'OUTPUT1' }] });
      expect(partial.outputs.map((o) => [o.name, o.shape])).toEqual([['OUTPUT1', [2, 2]]]);
      expect(out(partial, 'OUTPUT1')).toEqual([0, 0, 0, 0]);
    });
  });

  it('holds each execute for execute_delay_ms', async () => {
    const config = `${IDENTITY}parameters { key: "execute_delay_ms" value: { string_value: "150" } }\n`;
    await serving({ slow: config.replace('count: 2', 'count: 1') }, async (server) => {
      const x = tensorFromTyped('INPUT0', 'FP32', [1, 1], Float32Array.of(1));
      const started = performance.now();
      await server.infer({ id: 'a', model: 'slow', inputs: [x] });
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    });
  });

  it("refuses configs it cannot serve with Triton's identity messages", async () => {
    const io = (i: string, o: string) => `backend: "identity"\nmax_batch_size: 0\ninput [ ${i} ]\noutput [ ${o} ]\n`;
    const t = (name: string, type = 'TYPE_FP32', dims = '[ 4 ]') => `{ name: "${name}" data_type: ${type} dims: ${dims} }`;
    expect(await loadError(io(`${t('INPUT0')}, ${t('INPUT1')}`, t('OUTPUT0')))).toMatch('model configuration must have equal input/output pairs');
    expect(await loadError(io(t('IN0'), t('OUTPUT0')))).toMatch("expected input name to follow INPUT<index> pattern, got 'IN0'");
    expect(await loadError(io(t('INPUT0'), t('OUT0')))).toMatch("expected output name to follow OUTPUT<index> pattern, got 'OUT0'");
    expect(await loadError(io(t('INPUT0'), t('OUTPUT1')))).toMatch('expected input and output indices to match');
    expect(await loadError(io(t('INPUT0'), t('OUTPUT0', 'TYPE_INT32')))).toMatch('expected input and output datatype to match, got TYPE_FP32 and TYPE_INT32');
    expect(await loadError(io(t('INPUT0'), t('OUTPUT0', 'TYPE_FP32', '[ 8 ]')))).toMatch('expected input and output shape to match, got [4] and [8]');
    expect(await loadError(`${io(t('INPUT0'), t('OUTPUT0'))}parameters { key: "execute_delay_ms" value: { string_value: "soon" } }\n`)).toMatch(
      "parameter 'execute_delay_ms' must be an integer, got 'soon'",
    );
  });
});

describe('repeat', () => {
  it('streams one response per IN element, in order, with IDX, then ends', async () => {
    await serving({ repeat: REPEAT }, async (server) => {
      const { responses, error } = await stream(server, 'repeat', [int32('IN', [4, 2, 0, 1]), uint32('DELAY', [1, 2, 3, 4]), uint32('WAIT', [0])]);
      expect(error).toBeUndefined();
      expect(responses.map((r) => [out(r, 'OUT')[0], out(r, 'IDX')[0]])).toEqual([
        [4, 0],
        [2, 1],
        [0, 2],
        [1, 3],
      ]);
    });
  });

  it('releases its instance after WAIT ms while the responses of the request keep coming', async () => {
    await serving({ repeat: REPEAT }, async (server) => {
      const order: string[] = [];
      const slow = stream(server, 'repeat', [int32('IN', [1]), uint32('DELAY', [3000]), uint32('WAIT', [0])]).then((r) => (order.push('slow'), r));
      const fast = stream(server, 'repeat', [int32('IN', [2]), uint32('DELAY', [0]), uint32('WAIT', [0])]).then((r) => (order.push('fast'), r));
      const [s, f] = await Promise.all([slow, fast]);
      // One instance: the second request ran while the first one's response was still pending.
      expect(order).toEqual(['fast', 'slow']);
      expect(out(s.responses[0]!, 'OUT')).toEqual([1]);
      expect(out(f.responses[0]!, 'OUT')).toEqual([2]);
    });
  });

  it('a cancel reaches responses still streaming after the execute returned (the model stops, its stream ends CANCELLED)', async () => {
    const backend = exampleBackends().find((b) => b.name === 'repeat')!;
    const model = await backend.loadModel({
      config: normalizeModelConfig(parseModelConfigText(`name: "repeat"\n${REPEAT}`)),
      version: 1,
      modelDir: os.tmpdir(),
      versionDir: os.tmpdir(),
      log: silentLogger,
      infer: () => Promise.reject(new Error('unused')),
    });
    const instance = await model.createInstance({ name: 'repeat_0', kind: 'CPU', device: 0, groupName: 'repeat' });
    try {
      const responses: InferResponse[] = [];
      let firstSeen!: () => void;
      const first = new Promise<void>((r) => (firstSeen = r));
      const completed = new Promise<InferError | undefined>((resolve) => {
        const sink = { response: (r: InferResponse) => (responses.push(r), firstSeen()), complete: (e?: InferError) => resolve(e) };
        const abort = new AbortController();
        // The second response is due in 10 minutes: only the cancel can end this stream in time.
        const request = { id: 'r', model: 'repeat', inputs: [int32('IN', [1, 2]), uint32('DELAY', [0, 600_000]), uint32('WAIT', [0])] };
        void instance.executeDecoupled!([request], [sink], abort.signal).then(() => first.then(() => abort.abort()));
      });
      const error = await completed;
      expect(responses.map((r) => out(r, 'OUT')[0])).toEqual([1]);
      expect(error?.code).toBe('CANCELLED');
    } finally {
      await instance.dispose();
      await model.dispose();
    }
  }, 30_000);

  it("checks each request and the config with Triton's repeat messages", async () => {
    await serving({ repeat: REPEAT }, async (server) => {
      const { error } = await stream(server, 'repeat', [int32('IN', [1, 2]), uint32('DELAY', [1]), uint32('WAIT', [0])]);
      expect(error?.message).toBe('expected IN and DELAY shape to match, got [2] and [1]');
    });
    expect(await loadError(REPEAT.replace('max_batch_size: 0', 'max_batch_size: 4'))).toMatch('repeat backend only supports models with max_batch_size == 0');
    expect(await loadError(REPEAT.replace('name: "WAIT"', 'name: "PAUSE"'))).toMatch('expected third input tensor name to be WAIT, got PAUSE');
    expect(await loadError(REPEAT.replace('name: "IN" data_type: TYPE_INT32', 'name: "IN" data_type: TYPE_FP32'))).toMatch(
      'expected IN datatype to be INT32, got TYPE_FP32',
    );
  });
});

describe('square', () => {
  it('answers IN = [n] with n responses OUT = [n]', async () => {
    await serving({ square: SQUARE }, async (server) => {
      const three = await stream(server, 'square', [int32('IN', [3])]);
      expect(three.error).toBeUndefined();
      expect(three.responses.map((r) => out(r, 'OUT'))).toEqual([[3], [3], [3]]);
      const none = await stream(server, 'square', [int32('IN', [0])]);
      expect(none).toEqual({ responses: [], error: undefined });
      const negative = await stream(server, 'square', [int32('IN', [-1])]);
      expect(negative.error?.code).toBe('INVALID_ARG');
    });
    expect(await loadError(SQUARE.replace('dims: [ 1 ] } ]\noutput', 'dims: [ 2 ] } ]\noutput'))).toMatch('expected IN shape to be [1], got [2]');
  });

  it('fails the responses CUSTOM_FAIL_COUNT asks for and skips the CUSTOM_EMPTY_COUNT last ones', async () => {
    const config = `${SQUARE}parameters [ { key: "CUSTOM_FAIL_COUNT" value: { string_value: "1" } }, { key: "CUSTOM_EMPTY_COUNT" value: { string_value: "1" } } ]\n`;
    await serving({ square: config }, async (server) => {
      const r = await stream(server, 'square', [int32('IN', [4])]);
      expect(r.responses).toHaveLength(2);
      expect(r.error).toMatchObject({ code: 'UNKNOWN', message: 'simulated failure' });
    });
  });
});

const GPU_SIM = `backend: "gpu_sim"
max_batch_size: 64
input [ { name: "INPUT_IDS" data_type: TYPE_INT64 dims: [ -1 ] } ]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]
instance_group [ { kind: KIND_GPU count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 2000 }
parameters { key: "launch_us" value: { string_value: "30000" } }
parameters { key: "per_row_us" value: { string_value: "100" } }
`;

describe('gpu_sim (test double for a GPU-bound model)', () => {
  it('answers each request with zero outputs of its config shape, one launch per batch', async () => {
    await serving({ sim: GPU_SIM }, async (server) => {
      const ids = (rows: number) => tensorFromTyped('INPUT_IDS', 'INT64', [rows, 3], new BigInt64Array(rows * 3));
      // Eight requests at once: the batcher sends them as one or two executions, each one launch.
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => server.infer({ id: `r${i}`, model: 'sim', inputs: [ids(1 + (i % 2))] })));
      answers.forEach((a, i) => {
        expect(a.outputs[0]).toMatchObject({ name: 'LOGITS', datatype: 'FP32', shape: [1 + (i % 2), 2] });
        expect([...typedView(a.outputs[0]!)].every((v) => v === 0)).toBe(true);
      });
      const [stats] = server.statistics('sim');
      expect(stats!.inference_count).toBe(12);
      expect(stats!.execution_count).toBeLessThanOrEqual(2);
      // Compute is the timer: at least the launch cost per execution, whatever the CPU does.
      expect(stats!.inference_stats.compute_infer.ns / stats!.inference_stats.success.count).toBeGreaterThanOrEqual(30e6);
    });
  });

  it('refuses costs and outputs it cannot simulate, naming them', async () => {
    expect(await loadError(GPU_SIM.replace('"30000"', '"-1"'))).toMatch("parameter 'launch_us' must be a number of microseconds from 0 to 60000000, got '-1'");
    expect(await loadError(GPU_SIM.replace('"100"', '"fast"'))).toMatch("parameter 'per_row_us' must be a number of microseconds");
    expect(await loadError(GPU_SIM.replace('dims: [ 2 ]', 'dims: [ -1 ]'))).toMatch("gpu_sim output 'LOGITS' needs fixed dims, got [-1]");
  });
});
