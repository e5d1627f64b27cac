/**
 * `tritium dev` as an author runs it: a repository served and watched. Saving model.ts or
 * config.pbtxt reloads the model while requests keep flowing, with zero failed requests; a save
 * that breaks the model shows its error once, with file:line:column, and the old version keeps
 * serving; the model's printed lines appear in dev's output; `tritium model run` answers from the
 * running server, warm; `--inspect` opens the inspector on the model's worker, and a debugger
 * client sets a breakpoint by a line of model.ts and stops there.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';
import { runTritium } from './support/run-cli.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const repo = mkdtempSync(path.join(tmpdir(), 'tritium-dev-'));
const processes: ServeProcess[] = [];
afterAll(async () => {
  for (const p of processes) await p.stop(5000);
  rmSync(repo, { recursive: true, force: true });
});

const CONFIG = (name: string, suffix: string) => `name: "${name}"
backend: "python"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
parameters { key: "suffix" value: { string_value: "${suffix}" } }
instance_group [ { count: 1 kind: KIND_CPU } ]
`;

/** Answers `<text>:<release><suffix>`, printing a line per execute. */
const MODEL = (release: string, broken = '') => `import { InferenceResponse, Tensor, type InferenceRequest, type InitializeArgs } from '@tritium/backend-python-like/model';
const RELEASE = '${release}';${broken}
export default class TritonPythonModel {
  suffix = '';
  initialize(args: InitializeArgs) {
    this.suffix = args.modelConfig.parameters?.['suffix']?.string_value ?? '';
  }
  execute(requests: InferenceRequest[]) {
    console.log('serving', RELEASE);
    return requests.map((r) => {
      const text = r.inputs()[0]!.strings();
      return new InferenceResponse([new Tensor('OUT', text.map((t) => t + ':' + RELEASE + this.suffix), [text.length, 1])]);
    });
  }
}
`;

function writeModel(name: string, source: string, suffix?: string): void {
  mkdirSync(path.join(repo, name, '1'), { recursive: true });
  if (suffix !== undefined) writeFileSync(path.join(repo, name, 'config.pbtxt'), CONFIG(name, suffix));
  writeFileSync(path.join(repo, name, '1', 'model.ts'), source);
}

async function infer(port: number, model: string, text: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/v2/models/${model}/infer`, {
    method: 'POST',
    body: JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: [text] }] }),
  });
  const body = (await response.json()) as { outputs?: { data: string[] }[]; error?: string };
  if (!response.ok) throw new Error(`${response.status}: ${body.error}`);
  return body.outputs![0]!.data[0]!;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;
const tritium = (args: string[]) => runTritium(args, repo);


describe('tritium dev', () => {
  it('reloads a saved model.ts or config.pbtxt with zero failed requests; a broken save shows its error once and the old version serves', async () => {
    writeModel('echo', MODEL('r0'), '');
    const dev = startServeProcess([repo], process.env, undefined, 'dev');
    processes.push(dev);
    const { http } = await dev.started;
    await until('the first answer', async () => (await infer(http, 'echo', 'x').catch(() => '')) === 'x:r0');

    // Requests flow the whole time: none may fail.
    let flowing = true;
    const failures: string[] = [];
    const seen = new Set<string>();
    const traffic = Array.from({ length: 2 }, async () => {
      while (flowing) {
        await infer(http, 'echo', 'x').then(
          (out) => seen.add(out),
          (e: Error) => failures.push(e.message),
        );
      }
    });
    const served = (expected: string) => until(`'${expected}' served`, async () => (await infer(http, 'echo', 'x')) === expected);

    for (const release of ['r1', 'r2']) {
      writeModel('echo', MODEL(release));
      await served(`x:${release}`);
    }
    writeFileSync(path.join(repo, 'echo', 'config.pbtxt'), CONFIG('echo', '!'));
    await served('x:r2!');

    // A syntax error: shown once with its location; the same save again says so in one line.
    writeModel('echo', MODEL('r3', '\nconst broken = ;'));
    await until('the reload error', () => dev.log().includes("model 'echo' was not reloaded"));
    const model = path.join(repo, 'echo', '1', 'model.ts');
    expect(dev.log()).toContain(`${model}:3:16: error: Unexpected ";"`);
    writeModel('echo', MODEL('r3', '\nconst broken = ;') + '\n');
    await until('the repeated error', () => dev.log().includes("model 'echo' was not reloaded: the same error as above"));
    expect(count(dev.log(), 'error: Unexpected ";"')).toBe(1);
    expect(await infer(http, 'echo', 'x')).toBe('x:r2!');

    // A type error: the same, with TypeScript's code.
    writeModel('echo', MODEL('r4', "\nconst count: number = 'oops';"));
    await until('the type error', () => dev.log().includes('error TS2322'));
    expect(dev.log()).toMatch(new RegExp(`${model.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3:7: error TS2322: Type 'string' is not assignable to type 'number'`));
    expect(await infer(http, 'echo', 'x')).toBe('x:r2!');

    writeModel('echo', MODEL('r5'));
    await served('x:r5!');
    flowing = false;
    await Promise.all(traffic);
    expect(failures).toEqual([]);
    expect([...seen]).toEqual(expect.arrayContaining(['x:r0', 'x:r1', 'x:r2', 'x:r2!', 'x:r5!']));
    // The model's own lines reach dev's terminal.
    expect(dev.log()).toMatch(/model 'echo' version 1 instance 'echo_0_0' stdout: serving r5/);

    // tritium model run answers from this server: the model's line shows on stderr, and the
    // server printed it (the run loaded nothing itself).
    const before = count(dev.log(), 'stdout: serving r5');
    const run = await tritium(['model', 'run', path.join(repo, 'echo'), '--input', 'TEXT=["a","b"]']);
    expect(run.code, run.err).toBe(0);
    const result = JSON.parse(run.out) as { responses: { outputs: { shape: number[]; data: string[] }[] }[] };
    expect(result.responses[0]!.outputs[0]).toMatchObject({ shape: [2, 1], data: ['a:r5!', 'b:r5!'] });
    expect(run.err).toBe('serving r5\n');
    expect(count(dev.log(), 'stdout: serving r5')).toBe(before + 1);
  }, 600_000);

  it('--inspect: the worker opens the inspector; a debugger sets a breakpoint by a model.ts line and stops there', async () => {
    const inspected = mkdtempSync(path.join(tmpdir(), 'tritium-dev-inspect-'));
    mkdirSync(path.join(inspected, 'probe', '1'), { recursive: true });
    writeFileSync(path.join(inspected, 'probe', 'config.pbtxt'), CONFIG('probe', ''));
    const source = MODEL('p1');
    const file = path.join(inspected, 'probe', '1', 'model.ts');
    writeFileSync(file, source);
    try {
      const dev = startServeProcess([inspected, '--inspect', 'probe', '--model-type-check', 'off'], process.env, undefined, 'dev');
      processes.push(dev);
      const { http } = await dev.started;
      await until('the inspector URL', () => /inspector listening at ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.test(dev.log()));
      const url = /inspector listening at (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(dev.log())![1]!;
      const line = source.split('\n').findIndex((l) => l.includes("console.log('serving'")) + 1;
      const client = spawn(process.execPath, ['--experimental-websocket', '--no-warnings', path.join(HERE, 'support', 'inspector-client.mjs'), url, file, String(line)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let said = '';
      client.stdout.on('data', (d: Buffer) => (said += d.toString()));
      client.stderr.on('data', (d: Buffer) => (said += d.toString()));
      await until('the breakpoint', () => said.includes('READY') || client.exitCode !== null);
      expect(said).toMatch(/^READY \d+/);
      // The request stops at the breakpoint; the client resumes it.
      const answer = infer(http, 'probe', 'x');
      await until('the pause', () => said.includes('PAUSED'));
      expect(said).toContain(`PAUSED ${file}:${line}`);
      expect(await answer).toBe('x:p1');
    } finally {
      rmSync(inspected, { recursive: true, force: true });
    }
  }, 300_000);
});

