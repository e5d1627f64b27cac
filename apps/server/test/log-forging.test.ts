/**
 * Text a model controls (the error it throws, a crash's cause, what it logs or prints) cannot
 * start a line of the server's log: each line of a message gets the server's own prefix (in a
 * table the server prints, each line starts with the table's border), and other control
 * characters (a carriage return, a terminal escape) are written escaped.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferInput } from '@tritium/client';
import { pythonLikeBackend } from '@tritium/backend-python-like';
import { startTestServer, type TestServer } from './support/start-server.ts';

/** A line of Triton's format that the model writes, hoping to pass for one of the server's. */
const FORGED = (tag: string) => `E0101 00:00:00.000000 1 server.ts:1] ${tag} administrator logged in`;

const CONFIG = (name: string) => `name: "${name}"
backend: "python"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]`;

const MODELS: Record<string, string> = {
  liar_init: `export default class TritonPythonModel {
  initialize() { throw new Error(${JSON.stringify(`cannot start\n${FORGED('init')}\r\x1b[2K`)}); }
  execute() { return []; }
}`,
  liar_talk: `import { Logger, InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';
export default class TritonPythonModel {
  execute(requests: InferenceRequest[]) {
    Logger.logWarn(${JSON.stringify(`note\n${FORGED('log')}`)});
    console.log(${JSON.stringify(`printed\r${FORGED('stdout')}\x1b[31m`)});
    if (requests[0]!.parameters()['crash']) setTimeout(() => { throw new Error(${JSON.stringify(`gone\n${FORGED('crash')}`)}); });
    return requests.map((r) => new InferenceResponse([new Tensor('Y', r.inputs()[0]!.data, r.inputs()[0]!.shape)]));
  }
}`,
};

describe('model-originated text in the server log', () => {
  let s: TestServer;
  const repo = mkdtempSync(path.join(tmpdir(), 'tritium-log-forging-'));
  beforeAll(async () => {
    for (const [name, source] of Object.entries(MODELS)) {
      mkdirSync(path.join(repo, name, '1'), { recursive: true });
      writeFileSync(path.join(repo, name, 'config.pbtxt'), CONFIG(name));
      writeFileSync(path.join(repo, name, '1', 'model.ts'), source);
    }
    s = await startTestServer({ modelRepositories: [repo], exitOnError: false, strictReadiness: false }, undefined, undefined, [pythonLikeBackend()]);
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('every line starts with the server prefix; the forged lines sit after one, escaped', async () => {
    const x = () => new InferInput('X', [1, 1], 'FP32').setData(new Float32Array([1]));
    await s.http.infer('liar_talk', [x()]);
    await s.http.infer('liar_talk', [x()], { parameters: { crash: true } });
    // The thrown error ends the worker: wait for the crash to be logged.
    for (let i = 0; i < 200 && !s.logs().includes('gone'); i++) await new Promise((r) => setTimeout(r, 25));
    const lines = s.logs().split('\n').filter((l) => l.length > 0);
    const prefix = new RegExp(`^[IWEV]\\d{4} \\d\\d:\\d\\d:\\d\\d\\.\\d{6} ${process.pid} [^\\]\\s]+:\\d+\\] `);
    // Every line is the server's: a prefixed line, or a line of a table it printed (the model table
    // names liar_init's error in a cell, between the table's borders).
    for (const line of lines) expect(line, 'a line of the log').toMatch(/^[|+]/.test(line) ? /^(\+-[-+]*\+|\|.*\|)$/ : prefix);
    expect(lines.some((l) => l.startsWith('|') && l.includes('init administrator'))).toBe(true);
    for (const tag of ['init', 'log', 'stdout', 'crash']) {
      const forged = lines.filter((l) => l.includes(`${tag} administrator`));
      expect(forged.length, `the ${tag} line is in the log`).toBeGreaterThan(0);
      for (const line of forged) expect(line.startsWith('E0101'), line).toBe(false);
    }
    expect(s.logs()).not.toMatch(/[\r\x1b]/);
    expect(s.logs()).toContain('\\r\\x1b[2K');
  });
});
