/**
 * docs/writing-a-model.md as a reader follows it: every ```sh block, in order, in an empty temporary
 * folder, each expected to exit 0. The block tagged `install` is replaced by what npm install would
 * leave (this repository's packages linked into node_modules, the `tritium` bin); a block tagged
 * `background` is a server the reader leaves running in a terminal of its own: it runs in the
 * background on free loopback ports until the next one starts, and `localhost:8000` in the blocks
 * after it names its HTTP port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GUIDE = path.join(ROOT, 'docs', 'writing-a-model.md');
const folder = mkdtempSync(path.join(tmpdir(), 'tritium-guide-'));
let server: ChildProcess | undefined;

interface Block {
  readonly tag: string;
  readonly text: string;
}

/** The guide's ```sh blocks, with the word after `sh` as the tag. */
function shellBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```sh(?: (\w+))?\n([\s\S]*?)^```$/gm)].map((m) => ({ tag: m[1] ?? '', text: m[2]! }));
}

/** What `npm install @tritium/server @tritium/backend-python-like` leaves, from this checkout. */
function install(): void {
  writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ name: 'guide', private: true, type: 'module' }));
  mkdirSync(path.join(folder, 'node_modules', '@tritium'), { recursive: true });
  mkdirSync(path.join(folder, 'node_modules', '.bin'));
  symlinkSync(path.join(ROOT, 'apps', 'server'), path.join(folder, 'node_modules', '@tritium', 'server'));
  symlinkSync(path.join(ROOT, 'packages', 'backend-python-like'), path.join(folder, 'node_modules', '@tritium', 'backend-python-like'));
  symlinkSync(path.join(ROOT, 'apps', 'server', 'bin', 'tritium.mjs'), path.join(folder, 'node_modules', '.bin', 'tritium'));
}

const env = { ...process.env, PATH: `${path.join(folder, 'node_modules', '.bin')}:${process.env['PATH']}`, npm_config_offline: 'true' };

function run(script: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** Whether any process of the process group `pgid` is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a `background` block as Ctrl-C in its terminal would: a signal to its whole process group.
 * `npx` runs the server as a grandchild and does not pass SIGTERM on to it, so signalling npx alone
 * left the server running after the test. Waits until every process of the group has exited.
 */
async function stopServer(): Promise<void> {
  const pid = server?.pid;
  server = undefined;
  if (pid === undefined || !groupAlive(pid)) return;
  process.kill(-pid, 'SIGTERM');
  const end = Date.now() + 60_000;
  while (groupAlive(pid)) {
    if (Date.now() > end) {
      process.kill(-pid, 'SIGKILL');
      throw new Error(`the background server (process group ${pid}) did not stop within 60 s of SIGTERM`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a `background` block on free loopback ports; resolves with its HTTP port once it is ready. */
async function startServer(command: string): Promise<number> {
  await stopServer();
  const ports = '--http-address=127.0.0.1 --grpc-address=127.0.0.1 --metrics-address=127.0.0.1 --http-port=0 --grpc-port=0 --metrics-port=0';
  const child = spawn('bash', ['-c', `exec ${command.trim()} ${ports}`], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  server = child;
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const end = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`'${command.trim()}' did not become ready:\n${log}`);
    const port = Number(/Started HTTPService at [^\s:]+:(\d+)/.exec(log)?.[1]);
    if (port && (await fetch(`http://127.0.0.1:${port}/v2/health/ready`).then((r) => r.status === 200, () => false))) return port;
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterAll(async () => {
  await stopServer();
  rmSync(folder, { recursive: true, force: true });
});

describe('docs/writing-a-model.md', () => {
  it("runs every command of the guide in an empty folder, and they do what it says", async () => {
    const blocks = shellBlocks(readFileSync(GUIDE, 'utf8'));
    expect(blocks.map((b) => b.tag)).toEqual(['install', '', '', '', '', 'background', '', 'background', '']);
    const outputs: string[] = [];
    let port: number | undefined;
    for (const block of blocks) {
      if (block.tag === 'install') {
        install();
        continue;
      }
      if (block.tag === 'background') {
        port = await startServer(block.text);
        continue;
      }
      const script = port === undefined ? block.text : block.text.replaceAll('localhost:8000', `127.0.0.1:${port}`);
      const { code, out } = await run(script);
      expect(code, `${block.text}\n---\n${out}`).toBe(0);
      outputs.push(out);
    }
    // What the guide says each step shows.
    expect(readFileSync(path.join(folder, 'models/text_length/1/model-types.d.ts'), 'utf8')).toContain('"LENGTH": { readonly datatype: "INT64"');
    expect(outputs[2]).toMatch(/# pass 1\b/);
    expect(outputs[3]).toMatch(/"data": \["short","long"\]/);
    expect(outputs[4]).toContain('"data":["short"]');
    expect(outputs[4]).toMatch(/"data": \["long"\]/);
    expect(outputs[5]).toMatch(/^200\n/);
    expect(outputs[5]).toContain('"data":["short","long"]');

    // The mistake the guide shows is refused with the place it names.
    const model = path.join(folder, 'models/text_length/1/model.ts');
    writeFileSync(model, readFileSync(model, 'utf8').replace("input('TEXT')", "input('TXET')"));
    const mistake = await run('npx tritium config models/text_length');
    expect(mistake.code).toBe(1);
    expect(mistake.out).toContain(`${model}:10:35: error TS2345: Argument of type '"TXET"' is not assignable to parameter of type '"TEXT"'.`);
  }, 600_000);
});
