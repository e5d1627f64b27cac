import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferenceServer, decodeStrings, tensorFromStrings, type InferError, type InferResponse } from '@tritium/core';
import { pythonLikeBackend } from '../src/index.ts';
import { FIXTURES, asFloat32, asInt32, fp32, int32 } from './helpers.ts';

describe('through InferenceServer', () => {
  let repo: string;
  let server: InferenceServer;
  beforeAll(async () => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-pl-repo-'));
    for (const name of ['upper', 'add_sub', 'bls_caller', 'bls_stream', 'repeat', 'auto', 'echo_params', 'params_pipeline', 'ticker', 'bls_cancel', 'gate']) cpSync(path.join(FIXTURES, name), path.join(repo, name), { recursive: true });
    server = new InferenceServer({
      repositories: [repo],
      backends: [pythonLikeBackend({ restart: { initialBackoffMs: 10 } })],
      modelControlMode: 'poll',
      repositoryPollSecs: 0,
    });
    await server.start();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repo, { recursive: true, force: true });
  });

  const upper = async (text: string) => {
    const r = await server.infer({ id: 'u', model: 'upper', inputs: [tensorFromStrings('TEXT', [1, 1], [text])] });
    return decodeStrings(r.outputs[0]!.data);
  };

  it('BLS routes through the callee model and its scheduler', async () => {
    const r = await server.infer({
      id: 'b',
      model: 'bls_caller',
      inputs: [fp32('INPUT0', [1, 2, 3, 4]), fp32('INPUT1', [4, 3, 2, 1])],
      parameters: { target: 'add_sub' },
    });
    expect(asFloat32(r.outputs[0])).toEqual([5, 5, 5, 5]);
  });

  it('a self-call through the server fails UNAVAILABLE naming the cycle, never hangs', async () => {
    await expect(
      server.infer({ id: 's', model: 'bls_caller', inputs: [fp32('INPUT0', [1, 2, 3, 4]), fp32('INPUT1', [1, 1, 1, 1])], parameters: { target: 'bls_caller' } }),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('BLS call cycle: bls_caller -> bls_caller: all 1 instance(s)') });
  });

  it('streams a decoupled model’s responses', async () => {
    const got: InferResponse[] = [];
    const done = await new Promise<InferError | undefined>((resolve) =>
      server.inferStream({ id: 'r', model: 'repeat', inputs: [int32('IN', [7, 8], [2])] }, { response: (r) => void got.push(r), complete: resolve }),
    );
    expect(done).toBeUndefined();
    expect(got.map((r) => asInt32(r.outputs[0]))).toEqual([[7], [8]]);
  });

  it('a decoupled instance takes its next request once execute returns, while the last one still streams (as Triton)', async () => {
    const order: string[] = [];
    const stream = (id: string, value: number) =>
      new Promise<number[]>((resolve, reject) => {
        const got: number[] = [];
        server.inferStream(
          { id, model: 'gate', inputs: [int32('IN', [value], [1])] },
          { response: (r) => void got.push(...asInt32(r.outputs[0])), complete: (e) => (e ? reject(e) : (order.push(id), resolve(got))) },
        );
      });
    const held = stream('held', 1);
    const opener = stream('opener', 0);
    // Held to the instance until its final flag, 'held' would wait for 'opener' and 'opener' for the instance.
    let timer: NodeJS.Timeout | undefined;
    const deadlock = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`deadlock: completed ${JSON.stringify(order)}`)), 15_000)));
    try {
      expect(await Promise.race([Promise.all([held, opener]), deadlock])).toEqual([[1, 2], [0]]);
    } finally {
      clearTimeout(timer);
    }
    expect(order).toEqual(['opener', 'held']);
  });

  it('BLS exec({ decoupled: true }) streams 0, 1, 2 or 3 responses of a decoupled model, then its empty final response', async () => {
    for (const values of [[], [5], [5, 6], [5, 6, 7]]) {
      const r = await server.infer({ id: `d${values.length}`, model: 'bls_stream', inputs: [int32('IN', values, [values.length])] });
      const sum = values.reduce((a, b) => a + b, 0);
      expect(asInt32(r.outputs[0])).toEqual([values.length, sum, values.length + 1]);
    }
  });

  it('BLS exec({ decoupled: true }).cancel() cancels the call: the callee stops streaming, the iterator ends with CANCELLED', async () => {
    for (let round = 1; round <= 2; round++) {
      const r = await server.infer({ id: `c${round}`, model: 'bls_cancel', inputs: [int32('IN', [1], [1])] });
      const [got, code] = decodeStrings(r.outputs[0]!.data)[0]!.split('|');
      expect(Number(got)).toBeGreaterThanOrEqual(2);
      expect(code).toBe('CANCELLED');
      // The ticker's execute returned (it streams from a timer after that, until it sees the cancellation).
      await vi.waitFor(() => expect(server.statistics('ticker')[0]!.execution_count).toBe(round), { timeout: 10_000 });
    }
  });

  it('a pipeline batch keeps every request its own parameters and timeout: model.ts sees them per request', async () => {
    const send = (id: string, extra: { parameters?: Record<string, string>; timeoutUs?: number }) =>
      server.infer({ id, model: 'params_pipeline', inputs: [tensorFromStrings('TEXT', [1, 1], [id])], ...extra }).then((r) => decodeStrings(r.outputs[0]!.data)[0]);
    // Sent together: the two requests that agree share one pipeline batch, the others run apart.
    const seen = await Promise.all([
      send('a', { parameters: { lang: 'en' } }),
      send('b', { parameters: { lang: 'fr' } }),
      send('c', { parameters: { lang: 'en' } }),
      send('d', { parameters: { lang: 'en' }, timeoutUs: 7_000_000 }),
    ]);
    expect(seen).toEqual([
      '{"lang":"en"}|timeout=0|rows=2',
      '{"lang":"fr"}|timeout=0|rows=1',
      '{"lang":"en"}|timeout=0|rows=2',
      '{"lang":"en"}|timeout=7000000|rows=1',
    ]);
  });

  it('serves a model whose config comes from its static autoCompleteConfig', async () => {
    const r = await server.infer({ id: 'a', model: 'auto', inputs: [fp32('IN', [1, 2], [1, 2])] });
    expect(r.outputs[0]!.shape).toEqual([1, 2]);
    expect(asFloat32(r.outputs[0])).toEqual([2, 4]);
  });

  it('poll mode reloads an edited model.ts (and its local imports)', async () => {
    expect(await upper('abc')).toEqual(['ABC']);
    const helper = path.join(repo, 'upper/1/shout.ts');
    writeFileSync(helper, readFileSync(helper, 'utf8').replace('return s.toUpperCase();', "return `${s.toUpperCase()}!`;"));
    await server.pollNow();
    expect(await upper('abc')).toEqual(['ABC!']);
  });
});

describe('uploaded model files (load API `file:` overrides)', () => {
  let repo: string;
  let server: InferenceServer;
  const warnings: string[] = [];
  beforeAll(async () => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-pl-upload-'));
    server = new InferenceServer({
      repositories: [repo],
      backends: [pythonLikeBackend({ restart: { initialBackoffMs: 10 } })],
      modelControlMode: 'explicit',
      allowModelFileOverride: true,
      log: { error: () => {}, warn: (m) => warnings.push(m), info: () => {}, verbose: () => {} },
    });
    await server.start();
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(repo, { recursive: true, force: true });
  });

  it('always run with process isolation, whatever the config says, and the reason is logged', async () => {
    const config = JSON.stringify({
      name: 'uploaded',
      backend: 'python',
      max_batch_size: 0,
      input: [{ name: 'X', data_type: 'TYPE_INT32', dims: [1] }],
      output: [{ name: 'OUT', data_type: 'TYPE_STRING', dims: [1] }],
      parameters: { 'tritium.isolation': { string_value: 'thread' } },
    });
    const model = readFileSync(path.join(FIXTURES, 'attacker/1/model.ts'));
    await server.loadModel('uploaded', { configJson: config, files: { 'file:1/model.ts': model } });
    const r = await server.infer({ id: 'w', model: 'uploaded', inputs: [int32('X', [1], [1])], parameters: { mode: 'where' } });
    expect(decodeStrings(r.outputs[0]!.data)).toEqual(['process']);
    expect(warnings.join('\n')).toContain(
      "model 'uploaded': its files were uploaded through the load API, so its code runs with process isolation (its config asked for 'thread')",
    );
    // The same model from the repository, with the same config, runs as a thread.
    cpSync(path.join(FIXTURES, 'attacker'), path.join(repo, 'attacker'), { recursive: true });
    writeFileSync(path.join(repo, 'attacker/config.pbtxt'), readFileSync(path.join(FIXTURES, 'attacker/config.pbtxt'), 'utf8').replace(/^parameters.*$/gm, ''));
    await server.loadModel('attacker');
    const local = await server.infer({ id: 'l', model: 'attacker', inputs: [int32('X', [1], [1])], parameters: { mode: 'where' } });
    expect(decodeStrings(local.outputs[0]!.data)).toEqual(['thread']);
  });

  it('may not widen their sandbox: tritium.env, tritium.allow_network and tritium.allow_addons are refused', async () => {
    const model = readFileSync(path.join(FIXTURES, 'attacker/1/model.ts'));
    for (const [key, value] of [
      ['tritium.env', 'AWS_SECRET_ACCESS_KEY'],
      ['tritium.allow_network', 'true'],
      ['tritium.allow_addons', 'true'],
    ] as const) {
      const config = JSON.stringify({
        name: 'widening',
        backend: 'python',
        max_batch_size: 0,
        input: [{ name: 'X', data_type: 'TYPE_INT32', dims: [1] }],
        output: [{ name: 'OUT', data_type: 'TYPE_STRING', dims: [1] }],
        parameters: { [key]: { string_value: value } },
      });
      const e = await server.loadModel('widening', { configJson: config, files: { 'file:1/model.ts': model } }).catch((err: InferError) => err);
      expect((e as InferError).message).toContain(
        `model 'widening': parameter '${key}' is refused for a model whose files were uploaded through the load API`,
      );
    }
  });
});
