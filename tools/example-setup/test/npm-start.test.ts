/**
 * `npm start` as a user runs it (the root package.json's script, tools/start.mjs): each step says
 * what it does and how far it is (build k/n projects, the example setup, models k/n loaded), then
 * the server serves the example and stops cleanly on SIGTERM. And the example setup's fingerprint
 * covers the code that generates files, not what every build rewrites beside it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeFiles } from '../src/setup.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('example setup fingerprint', () => {
  it('hashes code (.js, .ts), not declarations, source maps or build info', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tritium-code-files-'));
    try {
      mkdirSync(path.join(dir, 'sub'));
      for (const f of ['a.js', 'a.js.map', 'a.d.ts', 'a.d.ts.map', 'tsconfig.lib.tsbuildinfo', 'tsconfig.spec.tsbuildinfo', 'sub/b.ts']) {
        writeFileSync(path.join(dir, f), f);
      }
      expect(codeFiles(dir).map((f) => path.relative(dir, f))).toEqual(['a.js', 'sub/b.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The models of the example repository: each folder holding a config. */
function exampleModels(): string[] {
  const repo = path.join(ROOT, 'model_repository');
  return readdirSync(repo).filter((m) => statSync(path.join(repo, m)).isDirectory());
}

describe('npm start', () => {
  it('is the progress-reporting start script', () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['start']).toBe('node tools/start.mjs');
  });

  it('says each step as it goes, serves the example, and stops on SIGTERM', async () => {
    const flags = ['--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0'];
    const child = spawn(process.execPath, [path.join(ROOT, 'tools/start.mjs'), ...flags], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let progress = '';
    let serving: () => void = () => undefined;
    const servingSeen = new Promise<void>((resolve) => (serving = resolve));
    child.stderr.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.startsWith('tritium start: ')) progress += `${line.slice('tritium start: '.length)}\n`;
      if (progress.includes('serving: HTTP')) serving();
    });
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await Promise.race([servingSeen, exited]);
    child.kill('SIGTERM');
    expect(await exited, progress).toBe(0);

    const lines = progress.trim().split('\n');
    expect(lines[0]).toBe("[1/3] build: the server's projects, without type checks (npm run typecheck checks them)");
    const built = lines.filter((l) => /^\[1\/3\] build \d+\/\d+: /.test(l));
    expect(built.map((l) => /build (\d+\/\d+)/.exec(l)![1])).toEqual(Array.from({ length: 12 }, (_, i) => `${i + 1}/12`));
    expect(built.at(-1)).toMatch(/tools\/example-setup/);
    expect(lines).toContainEqual(expect.stringMatching(/^\[2\/3\] example setup: done in [\d.]+ s$/));
    const models = exampleModels();
    expect(lines).toContain(`[3/3] serve: loading ${models.length} models of model_repository`);
    const loaded = lines.filter((l) => l.startsWith('[3/3] models: ')).map((l) => /models: (\d+)\/(\d+) loaded \(([^,]+),/.exec(l)!);
    expect(loaded.map((m) => `${m[1]}/${m[2]}`)).toEqual(models.map((_, i) => `${i + 1}/${models.length}`));
    expect(loaded.map((m) => m[3]).sort()).toEqual([...models].sort());
    expect(lines.at(-1)).toMatch(/^serving: HTTP 127\.0\.0\.1:\d+, gRPC 127\.0\.0\.1:\d+ \([\d.]+ s since npm start\)$/);
  }, 240_000);
});
