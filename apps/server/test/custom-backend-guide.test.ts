/**
 * docs/custom-backend.md as a reader follows it: its three TypeScript files (```ts <file> blocks)
 * written into an empty folder beside links to this repository's packages (what npm install would
 * leave), compiled with tsc as the guide says, and the server they make started with the guide's
 * command on free loopback ports: the `scale` model answers as the guide says, and a bad `factor`
 * is refused with the backend's message.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from './support/serve-process.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const folder = mkdtempSync(path.join(tmpdir(), 'tritium-backend-guide-'));
const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop(5000);
  rmSync(folder, { recursive: true, force: true });
});

const CONFIG = (factor: string) => `name: "double"
backend: "scale"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 3 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 3 ] } ]
parameters { key: "factor" value: { string_value: "${factor}" } }
dynamic_batching { }
`;

function run(file: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('docs/custom-backend.md', () => {
  it("compiles the guide's backend and serves a model with it; a bad parameter is refused by name", async () => {
    const guide = readFileSync(path.join(ROOT, 'docs', 'custom-backend.md'), 'utf8');
    const files = [...guide.matchAll(/^```ts (\S+)\n([\s\S]*?)^```$/gm)].map((m) => ({ name: m[1]!, text: m[2]! }));
    expect(files.map((f) => f.name)).toEqual(['scale-entry.ts', 'scale-backend.ts', 'serve.ts']);
    mkdirSync(path.join(folder, 'src'));
    for (const f of files) writeFileSync(path.join(folder, 'src', f.name), f.text);
    mkdirSync(path.join(folder, 'node_modules', '@tritium'), { recursive: true });
    for (const [name, dir] of [['core', 'packages/core'], ['server', 'apps/server']]) symlinkSync(path.join(ROOT, dir), path.join(folder, 'node_modules', '@tritium', name));
    symlinkSync(path.join(ROOT, 'node_modules', '@types'), path.join(folder, 'node_modules', '@types'));
    writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ name: 'scale', private: true, type: 'module' }));
    // The options the guide names, strict as a project would be.
    const tsconfig = { compilerOptions: { module: 'nodenext', target: 'ES2022', strict: true, rewriteRelativeImportExtensions: true, skipLibCheck: true, outDir: 'dist', rootDir: 'src', types: ['node'] } };
    writeFileSync(path.join(folder, 'tsconfig.json'), JSON.stringify(tsconfig));
    const compiled = await run(TSC, ['-p', '.']);
    expect(compiled.out).toBe('');
    expect(compiled.code).toBe(0);

    mkdirSync(path.join(folder, 'models', 'double', '1'), { recursive: true });
    writeFileSync(path.join(folder, 'models', 'double', 'config.pbtxt'), CONFIG('2'));
    const command = /^```sh\n(node dist\/serve\.js [^\n]*)\n```$/m.exec(guide)![1]!.split(' ');
    // The load API needs explicit model control.
    const flags = [...command.slice(2), '--model-control-mode=explicit', '--load-model=*'];
    const server = startServeProcess(flags, process.env, undefined, { script: path.join(folder, command[1]!), cwd: folder });
    servers.push(server);
    const { http } = await server.started;
    const response = await fetch(`http://127.0.0.1:${http}/v2/models/double/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }] }),
    });
    expect(await response.json()).toMatchObject({ outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 3], data: [2, 4, 6] }] });
    expect(server.log()).toMatch(/scale instance double_0\S* ready \(factor 2\)/);

    writeFileSync(path.join(folder, 'models', 'double', 'config.pbtxt'), CONFIG('x'));
    const load = await fetch(`http://127.0.0.1:${http}/v2/repository/models/double/load`, { method: 'POST' });
    expect(load.status).toBe(400);
    expect(await load.text()).toContain("model 'double': parameter 'factor' must be a number, got 'x'");
  }, 300_000);
});
