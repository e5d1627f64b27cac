/**
 * `tritium serve` as a user runs it, attacked by an uploaded model.ts (load API `file:` overrides,
 * so it runs under process isolation whatever its config says): it tries to kill the server and to
 * reach the server's own HTTP port, then spins forever; the server is then killed with SIGKILL. The
 * server survives the attacks, its sandboxed children die with it, and the next server removes
 * the temporary files the killed one left. Each part runs where this host has the mechanism (see
 * core's process-sandbox.ts) and says why it skips where not.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSandboxHost } from '@tritium/core/worker';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/tritium.mjs');
const host = await probeSandboxHost();
/** This host can give a sandboxed model every guarantee (see core's process-sandbox.ts). */
const everyMechanism = Object.keys(host.problems).length === 0 && host.mountProblem === undefined;
function where(id: 'signals' | 'network' | 'cleanup'): boolean {
  if (host.problems[id]) console.log(`[sandbox-e2e.test] skipping the '${id}' part: ${host.problems[id]}`);
  return !host.problems[id];
}

const HOSTILE_MODEL = `
import { ftruncateSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { InferenceResponse, Tensor, type InferenceRequest } from '@tritium/backend-python-like/model';

function attempt(fn: () => void): string {
  try { fn(); return 'sent'; } catch (e) { return (e as NodeJS.ErrnoException).code ?? String(e); }
}
function dial(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.setTimeout(10000, () => (s.destroy(), resolve('ETIMEDOUT')));
    s.once('connect', () => (s.destroy(), resolve('connected')));
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}
export default class TritonPythonModel {
  async execute(requests: InferenceRequest[]) {
    const p = requests[0]!.parameters() as Record<string, unknown>;
    let out = 'ok';
    if (p['mode'] === 'kill') out = [attempt(() => process.kill(Number(p['pid']), 'SIGKILL')), attempt(() => process.kill(process.ppid, 'SIGKILL'))].join(',');
    if (p['mode'] === 'dial') out = await dial(Number(p['port']));
    if (p['mode'] === 'spin') for (;;) {}
    if (p['mode'] === 'print') {
      console.log('hello from the model');
      console.error('a warning from the model');
    }
    // What a model could do to a log file it inherited: truncate it, and write a line of its own at 0.
    if (p['mode'] === 'rewrite') out = [1, 2].map((fd) => attempt(() => ftruncateSync(fd, 0)) + '/' + attempt(() => writeSync(fd, 'FORGED LOG LINE\\n', 0))).join(',');
    if (p['mode'] === 'flood') for (let i = 0; i < 2048; i++) console.log('x'.repeat(63));
    if (p['mode'] === 'engine') {
      out = attempt(() => setFlagsFromString('--allow-natives-syntax'));
      out += ',' + attempt(() => new Function('return %GetOptimizationStatus(function () {})'));
    }
    return [new InferenceResponse({ outputTensors: [new Tensor('OUT', [out], [1])] })];
  }
}
`;

const CONFIG = JSON.stringify({
  name: 'hostile',
  backend: 'python',
  max_batch_size: 0,
  input: [{ name: 'X', data_type: 'TYPE_INT32', dims: [1] }],
  output: [{ name: 'OUT', data_type: 'TYPE_STRING', dims: [1] }],
});

interface Served {
  child: ChildProcess;
  http: string;
  exited: Promise<void>;
  log(): string;
}

async function serve(repo: string, tmp: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--model-repository', repo, '--model-control-mode=explicit', '--allow-model-file-load=true', '--http-port=0', '--grpc-port=0',
      '--allow-metrics=false', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--exit-timeout-secs=5'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } },
  );
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const http = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /Started HTTPService at (127\.0\.0\.1:\d+)/.exec(log);
      if (m) {
        clearInterval(timer);
        resolve(m[1]!);
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`serve exited early:\n${log}`));
    });
  });
  return { child, http, exited, log: () => log };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function infer(s: Served, parameters: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  return post(`http://${s.http}/v2/models/hostile/infer`, {
    parameters,
    inputs: [{ name: 'X', datatype: 'INT32', shape: [1], data: [1] }],
  });
}

/** Pids of processes whose command line mentions `marker` (the sandbox's node names its read paths). */
function processesMentioning(marker: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.runIf(process.platform === 'linux')('tritium serve against an uploaded hostile model.ts', () => {
  let repo: string;
  let tmp: string;
  let first: Served;
  beforeAll(async () => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-e2e-repo-'));
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tritium-e2e-tmp-'));
    first = await serve(repo, tmp);
    const load = await post(`http://${first.http}/v2/repository/models/hostile/load`, {
      parameters: { config: CONFIG, 'file:1/model.ts': Buffer.from(HOSTILE_MODEL).toString('base64') },
    });
    expect(load).toEqual({ status: 200, json: {} });
  });
  afterAll(async () => {
    if (first && first.child.exitCode === null && first.child.signalCode === null) {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    rmSync(repo, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  it.runIf(where('signals'))('cannot kill the server: neither its pid nor its parent', async () => {
    const r = await infer(first, { mode: 'kill', pid: first.child.pid });
    if (r.status === 200) expect((r.json['outputs'] as { data: string[] }[])[0]!.data[0]).toMatch(/^E(SRCH|PERM),/);
    else expect(String(r.json['error'])).toMatch(/crashed: worker process killed by SIGKILL/); // it reached only itself
    expect((await fetch(`http://${first.http}/v2/health/live`)).status).toBe(200);
    expect(first.child.exitCode).toBeNull();
  });

  it.runIf(where('network'))('cannot reach the server’s own HTTP port', async () => {
    const r = await infer(first, { mode: 'dial', port: Number(first.http.split(':')[1]) });
    expect(r.status).toBe(200);
    expect((r.json['outputs'] as { data: string[] }[])[0]!.data[0]).toMatch(/^E[A-Z]+$/);
  });

  it.runIf(where('cleanup'))('dies with a SIGKILLed server, and the next server sweeps what the killed one left', async () => {
    const overrides = readdirSync(tmp).filter((n) => n.startsWith('tritium-override-'));
    expect(overrides.length).toBe(1);
    const marker = path.join(tmp, overrides[0]!);
    // A spinning execute: the child never looks at its channel again.
    void infer(first, { mode: 'spin' }).catch(() => undefined);
    await until('the sandboxed child', () => processesMentioning(marker).length > 0);
    const deadPid = first.child.pid!;
    first.child.kill('SIGKILL');
    await first.exited;
    await until('the sandboxed children to die with the server', () => processesMentioning(marker).length === 0);
    expect(readdirSync(tmp).some((n) => n.includes(`-${deadPid}-`))).toBe(true); // left behind by SIGKILL

    const second = await serve(repo, tmp);
    try {
      const { status } = await post(`http://${second.http}/v2/repository/models/hostile/load`, {
        parameters: { config: CONFIG, 'file:1/model.ts': Buffer.from(HOSTILE_MODEL).toString('base64') },
      });
      expect(status).toBe(200);
      // Upload folders at start, worker files and the python-like cache's bundles on the next load.
      const cache = path.join(tmp, `tritium-python-like-${process.getuid!()}`);
      const left = () => [...readdirSync(tmp), ...readdirSync(cache)].filter((n) => n.includes(`-${deadPid}-`));
      await until(`the killed server's temporary files to be swept (left: ${left().join(', ')})`, () => left().length === 0);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    // A clean stop leaves nothing of its own behind.
    expect(readdirSync(tmp).filter((n) => n.includes(`-${second.child.pid}-`))).toEqual([]);
  });
});

/**
 * The server's stdout and stderr redirected to a file, as `tritium serve > server.log 2>&1` does
 * (O_TRUNC, not O_APPEND: a writer that truncates it and writes at offset 0 replaces its content).
 */
async function serveToFile(repo: string, tmp: string, logFile: string, flags: string[]): Promise<Omit<Served, 'log'>> {
  const fd = openSync(logFile, 'w');
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--model-repository', repo, '--model-control-mode=explicit', '--allow-model-file-load=true', '--http-port=0', '--grpc-port=0',
      '--allow-metrics=false', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', ...flags],
    { stdio: ['ignore', fd, fd], env: { ...process.env, TMPDIR: tmp } },
  );
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let http: string | undefined;
  await until('the server to start', () => {
    http = /Started HTTPService at (127\.0\.0\.1:\d+)/.exec(readFileSync(logFile, 'utf8'))?.[1];
    return http !== undefined || child.exitCode !== null;
  });
  if (!http) throw new Error(`serve exited early:\n${readFileSync(logFile, 'utf8')}`);
  return { child, http, exited };
}

describe.runIf(process.platform === 'linux')('tritium serve: what an uploaded model.ts can do to the server’s log, engine and files', () => {
  let repo: string;
  let tmp: string;
  let logFile: string;
  let server: Omit<Served, 'log'>;
  const output = (r: { json: Record<string, unknown> }): string => (r.json['outputs'] as { data: string[] }[] | undefined)?.[0]?.data[0] ?? JSON.stringify(r.json);
  beforeAll(async () => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'tritium-e2e-repo-'));
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tritium-e2e-tmp-'));
    logFile = path.join(tmp, 'server.log');
    // The uploads and the model's bundle land in `tmp`, a 0700 folder: a root server's sandbox
    // reaches them through its own mount namespace. Where this host has every mechanism, nothing
    // may be left unenforced: --strict-sandbox would refuse the load.
    server = await serveToFile(repo, tmp, logFile, ['--model-log-rate=4096', ...(everyMechanism ? ['--strict-sandbox'] : [])]);
    const load = await post(`http://${server.http}/v2/repository/models/hostile/load`, {
      parameters: { config: CONFIG, 'file:1/model.ts': Buffer.from(HOSTILE_MODEL).toString('base64') },
    });
    expect(load).toEqual({ status: 200, json: {} });
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    rmSync(repo, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  it.runIf(everyMechanism)('loads with every guarantee enforced, its files under a 0700 folder included (--strict-sandbox)', () => {
    expect(readFileSync(logFile, 'utf8')).not.toContain('does NOT enforce');
  });

  it('cannot truncate or rewrite the log file; its lines reach it attributed, through the server', async () => {
    const before = readFileSync(logFile, 'utf8');
    expect(before).toContain('successfully loaded');
    expect(output(await infer(server as Served, { mode: 'rewrite' }))).toBe('EINVAL/ESPIPE,EINVAL/ESPIPE');
    expect(output(await infer(server as Served, { mode: 'print' }))).toBe('ok');
    await until('the model’s lines in the log', () => readFileSync(logFile, 'utf8').includes('a warning from the model'));
    const after = readFileSync(logFile, 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(after).not.toContain('FORGED');
    expect(after).toMatch(/^I\d{4} [\d:.]+ \d+ [\w.-]+:\d+\] model 'hostile' version 1 instance 'hostile_0' stdout: hello from the model$/m);
    expect(after).toMatch(/^W\d{4} [\d:.]+ \d+ [\w.-]+:\d+\] model 'hostile' version 1 instance 'hostile_0' stderr: a warning from the model$/m);
  });

  it('floods the log only up to --model-log-rate; the rest is dropped, and said so', async () => {
    expect(output(await infer(server as Served, { mode: 'flood' }))).toBe('ok');
    await until('the drop report', () => readFileSync(logFile, 'utf8').includes('dropped: over the bound of 4096 bytes per second (--model-log-rate)'));
    const logged = readFileSync(logFile, 'utf8').split('\n').filter((l) => l.endsWith(`stdout: ${'x'.repeat(63)}`)).length;
    expect(logged).toBeLessThan(2048 / 4);
  });

  it('cannot change V8’s flags', async () => {
    expect(output(await infer(server as Served, { mode: 'engine' }))).toMatch(/^Error: v8\.setFlagsFromString is not available to model code .*,SyntaxError/);
  });

  it('has its uploaded files, and its bundle, readable by the server and its sandbox’s user only', () => {
    const folder = path.join(tmp, readdirSync(tmp).find((n) => n.startsWith('tritium-override-'))!);
    const bundles = path.join(tmp, `tritium-python-like-${process.getuid!()}`);
    const bundle = path.join(bundles, readdirSync(bundles).find((n) => n.startsWith('hostile-'))!);
    const root = process.getuid!() === 0;
    const files: [string, number][] = [
      [folder, root ? 0o750 : 0o700],
      [path.join(folder, '1'), root ? 0o750 : 0o700],
      [path.join(folder, '1', 'model.ts'), root ? 0o640 : 0o600],
      [bundle, root ? 0o640 : 0o600],
    ];
    for (const [file, mode] of files) {
      const st = statSync(file);
      expect((st.mode & 0o777).toString(8), file).toBe(mode.toString(8));
      expect(st.uid).toBe(process.getuid!());
      // Under a root server the sandbox runs as uid/gid 65534: its group reads, others do not.
      expect(st.gid).toBe(root ? 65534 : process.getgid!());
    }
  });
});
